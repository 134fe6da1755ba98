# SPDX-License-Identifier: Apache-2.0
# GPU collection cycle for 8 GPUs: derived metrics alone, and through the fake NVML library
# (included by bench/CMakeLists.txt when vigil_gpu is built).
if(TARGET vigil_collectors)
  vigil_benchmark(gpu_collector_benchmark
    SRCS ${CMAKE_CURRENT_SOURCE_DIR}/gpu_collector_benchmark.cc
    DEPS vigil_collectors vigil_gpu)
  if(TARGET fake_nvml)
    add_dependencies(gpu_collector_benchmark fake_nvml)
    target_compile_definitions(gpu_collector_benchmark PRIVATE
        VIGIL_FAKE_NVML_DIR="${VIGIL_FAKE_NVML_DIR}")
  endif()
endif()
