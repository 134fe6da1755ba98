# SPDX-License-Identifier: Apache-2.0
# Trace reader microbenchmarks (included by bench/CMakeLists.txt). The whole-process comparison
# with Holistic Trace Analysis is bench/analyze_vs_hta.sh.
vigil_benchmark(trace_reader_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/trace_reader_benchmark.cc
  DEPS vigil_trace)
