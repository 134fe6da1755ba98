# SPDX-License-Identifier: Apache-2.0
# Helpers every module uses: warnings, sanitizers, one library per module, tests beside code.

# Optimised builds add -Wno-restrict: GCC 12 reports false -Wrestrict errors at -O2/-O3 inside
# std::string concatenation (GCC bug 105329), which would fail release builds on correct code.
set(VIGIL_WARNINGS -Wall -Wextra -Wpedantic -Werror -Wshadow -Wnon-virtual-dtor
    -Wimplicit-fallthrough $<$<NOT:$<CONFIG:Debug>>:-Wno-restrict>)
set(VIGIL_SOURCE_DIR ${CMAKE_SOURCE_DIR})
set(VIGIL_TEST_DATA_DIR ${CMAKE_SOURCE_DIR}/tests/data)
get_filename_component(VIGIL_SHARED_DIR ${CMAKE_SOURCE_DIR}/../shared ABSOLUTE)

if(VIGIL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo)
endif()

# True when module NAME is part of this build (see VIGIL_MODULES).
function(vigil_module_enabled name out)
  if(VIGIL_MODULES STREQUAL "all" OR name IN_LIST VIGIL_MODULES)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# vigil_library(NAME SRCS a.cc b.cc DEPS x y)
function(vigil_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/src ${CMAKE_BINARY_DIR}/gen)
  target_compile_options(${name} PRIVATE ${VIGIL_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} PUBLIC ${ARG_PUBLIC_DEPS})
endfunction()

# vigil_test(NAME SRCS a_test.cc DEPS x y [LABEL unit|integration|hw]): one gtest binary.
function(vigil_test name)
  if(NOT VIGIL_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "LABEL;TIMEOUT" "SRCS;DEPS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_compile_options(${name} PRIVATE ${VIGIL_WARNINGS})
  target_compile_definitions(${name} PRIVATE
      VIGIL_TEST_DATA_DIR="${VIGIL_TEST_DATA_DIR}"
      VIGIL_SHARED_DIR="${VIGIL_SHARED_DIR}"
      VIGIL_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  # Plugins load from ../lib/vigil/ beside the binary (base/plugin.h): have them built.
  foreach(plugin vigil_http_client_plugin vigil_kubelet_plugin)
    if(TARGET ${plugin})
      add_dependencies(${name} ${plugin})
    endif()
  endforeach()
  gtest_discover_tests(${name} PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT}
                       DISCOVERY_TIMEOUT 60)
endfunction()
