# SPDX-License-Identifier: Apache-2.0
# Parser microbenchmarks of the host collectors, run on the fixture trees' text.
vigil_benchmark(collector_parsers_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/collector_parsers_benchmark.cc
  DEPS vigil_collectors)

# perf_pmu: the cost of one Collect() tick on this host's kernel and on a scripted fixture host.
vigil_benchmark(perf_pmu_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/perf_pmu_benchmark.cc
  DEPS vigil_collectors)

# sys_netclass: one tick on this host from the rtnetlink dump against sysfs alone, hot and cold.
vigil_benchmark(netclass_tick_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/netclass_tick_benchmark.cc
  DEPS vigil_collectors)
