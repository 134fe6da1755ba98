# SPDX-License-Identifier: Apache-2.0
# IPC fabric: poll reply latency with 1,000 registered processes (target p99 < 1 ms).
vigil_benchmark(ipc_bench SRCS ipc_bench.cc DEPS vigil_ipc)
# `vigil trace` fan-out to 256 in-process daemons on loopback, end to end (target < 1 s).
if(TARGET vigil_cli_trace AND TARGET vigil_rpc)
  vigil_benchmark(trace_fanout_bench
    SRCS trace_fanout_bench.cc
    DEPS vigil_cli_trace vigil_ipc vigil_rpc)
endif()
