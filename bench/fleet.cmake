# SPDX-License-Identifier: Apache-2.0
# Fleet ledger benchmarks (included by bench/CMakeLists.txt): ingest samples/s into the SQLite
# ledger (in process, and over HTTP from many simulated daemons), and the 30-day attribution
# query over 1,000 GPUs.
find_package(PkgConfig REQUIRED)
if(NOT TARGET PkgConfig::HTTPLIB)
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
endif()
vigil_benchmark(fleet_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/fleet_benchmark.cc
  DEPS vigil_fleet PkgConfig::HTTPLIB)

# The load generator (a simulated fleet pushing to vigil-fleet or a remote-write receiver) and
# the ledger filler used by bench/fleet_vs_prometheus.sh. In bin/, not bench/: tools/bench.sh
# runs everything in bench/ as a Google Benchmark.
if(TARGET vigil_sinks)
  find_package(CLI11 REQUIRED)
  find_package(ZLIB REQUIRED)
  add_executable(fleet_loadgen ${CMAKE_CURRENT_SOURCE_DIR}/fleet_loadgen.cc
                               ${CMAKE_CURRENT_SOURCE_DIR}/fleet_sim.cc)
  target_compile_options(fleet_loadgen PRIVATE ${VIGIL_WARNINGS})
  target_link_libraries(fleet_loadgen PRIVATE vigil_sinks vigil_fleet PkgConfig::HTTPLIB ZLIB::ZLIB
                                              CLI11::CLI11)
  set_target_properties(fleet_loadgen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
endif()
