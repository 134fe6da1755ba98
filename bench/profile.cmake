# SPDX-License-Identifier: Apache-2.0
# `vigil profile`'s cost to the sampled process, against Debian's perf record (linux-perf).
if(TARGET vigil_profile_sampling)
  add_executable(profile_overhead profile_overhead.cc)
  target_compile_options(profile_overhead PRIVATE ${VIGIL_WARNINGS} -fno-omit-frame-pointer)
  target_link_libraries(profile_overhead PRIVATE vigil_profile_sampling)
  set_target_properties(profile_overhead PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
