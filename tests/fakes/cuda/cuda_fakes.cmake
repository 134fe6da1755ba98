# SPDX-License-Identifier: Apache-2.0
# Fake CUDA runtime, driver and PyTorch caching allocator for vigil snoop's tests:
#   <build>/tests/fakes/cuda/libcudart.so.12   runtime (also libcudart_static.a, linked into
#   <build>/tests/fakes/cuda/libcuda.so.1      executables to test a static cudart)
#   <build>/tests/fakes/cuda/libc10_cuda.so    caching allocator (links the fake runtime)
# Built without sanitizers, with frame pointers, and without identical-code folding so every
# entry point stays a separate function a uprobe can hit. The shared runtime and the allocator
# are CET builds (-fcf-protection: every function starts with endbr64, as in distributions whose
# compilers default to it); the driver and the static runtime are not, so the tests probe both
# kinds of function entry.
set(VIGIL_FAKE_CUDA_DIR ${CMAKE_CURRENT_BINARY_DIR}/cuda CACHE INTERNAL "")
set(fake_cuda_flags -Wall -Wextra -Werror -O2 -fno-sanitize=all -fno-omit-frame-pointer
    -fno-ipa-icf -fno-inline-small-functions)

function(vigil_fake_cuda target kind output soversion)
  add_library(${target} ${kind} ${ARGN})
  set_target_properties(${target} PROPERTIES
      OUTPUT_NAME ${output}
      C_VISIBILITY_PRESET hidden
      CXX_VISIBILITY_PRESET hidden
      LIBRARY_OUTPUT_DIRECTORY ${VIGIL_FAKE_CUDA_DIR}
      ARCHIVE_OUTPUT_DIRECTORY ${VIGIL_FAKE_CUDA_DIR})
  if(soversion)
    set_target_properties(${target} PROPERTIES SOVERSION ${soversion})
  endif()
  target_compile_options(${target} PRIVATE ${fake_cuda_flags})
  target_link_options(${target} PRIVATE -fno-sanitize=all)
endfunction()

vigil_fake_cuda(fake_cudart SHARED cudart 12 cuda/fake_cudart.c)
vigil_fake_cuda(fake_cudart_static STATIC cudart_static "" cuda/fake_cudart.c)
vigil_fake_cuda(fake_cuda SHARED cuda 1 cuda/fake_cuda.c)
vigil_fake_cuda(fake_c10_cuda SHARED c10_cuda "" cuda/fake_c10_cuda.cc)
target_link_libraries(fake_c10_cuda PRIVATE fake_cudart)
target_compile_options(fake_cudart PRIVATE -fcf-protection=full)
target_link_libraries(fake_cudart PRIVATE ${CMAKE_DL_LIBS})  # dlopen of the driver.
target_link_libraries(fake_cudart_static INTERFACE ${CMAKE_DL_LIBS})
target_compile_options(fake_c10_cuda PRIVATE -fcf-protection=full)
