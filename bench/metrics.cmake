# SPDX-License-Identifier: Apache-2.0
# Series store and Gorilla codec microbenchmarks (included by bench/CMakeLists.txt).
vigil_benchmark(series_store_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/series_store_benchmark.cc
  DEPS vigil_metrics)
