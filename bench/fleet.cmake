# SPDX-License-Identifier: Apache-2.0
# Fleet ledger benchmarks (included by bench/CMakeLists.txt): ingest samples/s into the SQLite
# ledger and the 30-day attribution query over 1,000 GPUs.
vigil_benchmark(fleet_benchmark
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/fleet_benchmark.cc
  DEPS vigil_fleet)
