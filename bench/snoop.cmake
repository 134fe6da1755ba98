# SPDX-License-Identifier: Apache-2.0
# vigil snoop's probe overhead (included by bench/CMakeLists.txt): nanoseconds per instrumented
# call on the fake CUDA runtime with and without the probes, and the slowdown of a loop making
# 200,000 launches per second. Needs root to load the probes; the fake runtime comes from
# tests/fakes (a build with tests). snoop_python_overhead measures what Python frames add.
if(TARGET fake_cudart)
  vigil_benchmark(snoop_overhead
    SRCS ${CMAKE_CURRENT_SOURCE_DIR}/snoop_overhead.cc
    DEPS vigil_snoop vigil_profile vigil_base fake_cudart fake_cuda)
  target_compile_options(snoop_overhead PRIVATE -fno-omit-frame-pointer)

  # What Python frames add per call: CPython calling the fake runtime through ctypes.
  vigil_benchmark(snoop_python_overhead
    SRCS ${CMAKE_CURRENT_SOURCE_DIR}/snoop_python_overhead.cc
    DEPS vigil_snoop vigil_profile vigil_base)
  target_compile_definitions(snoop_python_overhead PRIVATE
      SNOOP_PYTHON_CALLS="${CMAKE_CURRENT_SOURCE_DIR}/snoop_python_calls.py"
      FAKE_CUDART="$<TARGET_FILE:fake_cudart>")
  add_dependencies(snoop_python_overhead fake_cudart)
endif()
