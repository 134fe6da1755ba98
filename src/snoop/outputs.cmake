# SPDX-License-Identifier: Apache-2.0
# The outputs of a snoop session, pure functions of snoop_summary.h / raw_event.h values: the
# --json summary, the --chrome-trace file, the terminal summary and the live view. A library of
# their own so that they build and test without libbpf, clang or a kernel.
find_package(nlohmann_json REQUIRED)

vigil_library(vigil_snoop_output
  SRCS ${CMAKE_CURRENT_LIST_DIR}/snoop_format.cc ${CMAKE_CURRENT_LIST_DIR}/snoop_json.cc
       ${CMAKE_CURRENT_LIST_DIR}/snoop_chrome_trace.cc ${CMAKE_CURRENT_LIST_DIR}/snoop_text.cc
       ${CMAKE_CURRENT_LIST_DIR}/snoop_live_view.cc
  DEPS nlohmann_json::nlohmann_json
  PUBLIC_DEPS vigil_base)

vigil_test(snoop_output_unittests
  SRCS ${CMAKE_CURRENT_LIST_DIR}/snoop_json_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/snoop_chrome_trace_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/snoop_text_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/snoop_live_view_test.cc
  DEPS vigil_snoop_output nlohmann_json::nlohmann_json)
