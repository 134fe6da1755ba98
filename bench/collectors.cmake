# SPDX-License-Identifier: Apache-2.0
# Parser microbenchmarks of the host collectors, run on the fixture trees' text.
vigil_benchmark(collector_parsers_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/collector_parsers_benchmark.cc
  DEPS vigil_collectors)
