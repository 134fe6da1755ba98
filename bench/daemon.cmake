# SPDX-License-Identifier: Apache-2.0
# vigild's continuous profiling: the daemon's CPU at 19 Hz on busy processes. Linked against the
# daemon's library, so it runs the profiler and uploader vigild runs.
add_executable(continuous_profile_cost continuous_profile_cost.cc)
target_compile_options(continuous_profile_cost PRIVATE ${VIGIL_WARNINGS} -fno-omit-frame-pointer)
target_link_libraries(continuous_profile_cost PRIVATE vigil_daemon)
set_target_properties(continuous_profile_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_BINARY_DIR}/bench)
