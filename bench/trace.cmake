# SPDX-License-Identifier: Apache-2.0
# Trace reader microbenchmarks (included by bench/CMakeLists.txt). The whole-process comparison
# with Holistic Trace Analysis is bench/analyze_vs_hta.sh.
vigil_benchmark(trace_reader_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/trace_reader_benchmark.cc
  DEPS vigil_trace)

# Synthetic multi-GB Kineto traces for bench/analyze_synthetic.sh (a tool, not a benchmark: it
# goes to bench/tools/ so tools/bench.sh does not run it as one).
find_package(ZLIB REQUIRED)
find_package(fmt REQUIRED)
add_executable(synth_kineto_trace ${CMAKE_CURRENT_SOURCE_DIR}/synth_kineto_trace.cc)
target_compile_options(synth_kineto_trace PRIVATE ${VIGIL_WARNINGS})
target_link_libraries(synth_kineto_trace PRIVATE fmt::fmt ZLIB::ZLIB)
set_target_properties(synth_kineto_trace PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_BINARY_DIR}/bench/tools)
