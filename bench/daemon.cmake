# SPDX-License-Identifier: Apache-2.0
# vigild's continuous profiling: the daemon's CPU at 19 Hz on busy processes. Built from the
# profiler's own sources and the libraries it uses, not all of vigil_daemon.
add_executable(continuous_profile_cost continuous_profile_cost.cc
               ${CMAKE_SOURCE_DIR}/src/daemon/continuous_profiler.cc
               ${CMAKE_SOURCE_DIR}/src/collectors/watch_list.cc)
target_compile_options(continuous_profile_cost PRIVATE ${VIGIL_WARNINGS} -fno-omit-frame-pointer)
target_link_libraries(continuous_profile_cost PRIVATE vigil_profile_sampling vigil_attribution
                      vigil_metrics vigil_base)
set_target_properties(continuous_profile_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_BINARY_DIR}/bench)
