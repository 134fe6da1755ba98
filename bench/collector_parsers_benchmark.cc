// SPDX-License-Identifier: Apache-2.0
// One benchmark per host collector parser, on the text of the fixture trees under
// tests/data/hosts/. Parsing must stay far below a millisecond per tick.
#include <string>

#include <benchmark/benchmark.h>

#include "base/file_util.h"
#include "collectors/proc_cpu_collector.h"
#include "collectors/proc_diskstats_collector.h"
#include "collectors/proc_loadavg_collector.h"
#include "collectors/proc_meminfo_collector.h"
#include "collectors/proc_netdev_collector.h"
#include "collectors/proc_pressure_collector.h"
#include "collectors/statvfs_filesystem_collector.h"
#include "collectors/sys_infiniband_collector.h"

namespace vigil {
namespace {

constexpr char kHost[] = "cgroupv2_numa_ib_host";

std::string Fixture(const char* kind, const std::string& rel) {
  StatusOr<std::string> text =
      ReadSmallFile(std::string(VIGIL_TEST_DATA_DIR) + "/hosts/" + kind + "/" + rel);
  return text.ok() ? *text : std::string();
}

// Runs `parse` on the fixture file; the benchmark errors out when the file is missing or the
// parse fails, so a broken fixture never reports a fast time.
template <typename Parse>
void RunParser(benchmark::State& state, const char* kind, const std::string& rel, Parse parse) {
  const std::string text = Fixture(kind, rel);
  if (text.empty() || !parse(text).ok()) {
    state.SkipWithError(("cannot parse fixture " + rel).c_str());
    return;
  }
  for (auto _ : state) {
    auto result = parse(text);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

void BM_ProcStat(benchmark::State& state) {
  RunParser(state, kHost, "proc/stat", &ProcCpuCollector::Parse);
}
BENCHMARK(BM_ProcStat);

void BM_ProcStatDebianVm(benchmark::State& state) {  // Has the long real "intr" line.
  RunParser(state, "debian12_vm", "proc/stat", &ProcCpuCollector::Parse);
}
BENCHMARK(BM_ProcStatDebianVm);

void BM_ProcLoadavg(benchmark::State& state) {
  RunParser(state, kHost, "proc/loadavg", &ProcLoadavgCollector::Parse);
}
BENCHMARK(BM_ProcLoadavg);

void BM_ProcMeminfo(benchmark::State& state) {
  RunParser(state, "debian12_vm", "proc/meminfo", &ProcMeminfoCollector::Parse);
}
BENCHMARK(BM_ProcMeminfo);

void BM_NodeMeminfo(benchmark::State& state) {
  RunParser(state, kHost, "sys/devices/system/node/node0/meminfo",
            &ProcMeminfoCollector::ParseNode);
}
BENCHMARK(BM_NodeMeminfo);

void BM_ProcPressure(benchmark::State& state) {
  RunParser(state, kHost, "proc/pressure/cpu", &ProcPressureCollector::Parse);
}
BENCHMARK(BM_ProcPressure);

void BM_ProcDiskstats(benchmark::State& state) {
  RunParser(state, kHost, "proc/diskstats", &ProcDiskstatsCollector::Parse);
}
BENCHMARK(BM_ProcDiskstats);

void BM_Mounts(benchmark::State& state) {
  RunParser(state, kHost, "proc/1/mounts", &StatvfsFilesystemCollector::Parse);
}
BENCHMARK(BM_Mounts);

void BM_ProcNetDev(benchmark::State& state) {
  RunParser(state, kHost, "proc/net/dev", &ProcNetdevCollector::ParseNetDev);
}
BENCHMARK(BM_ProcNetDev);

void BM_ProcNetSnmpTcp(benchmark::State& state) {
  RunParser(state, "debian12_vm", "proc/net/snmp", [](std::string_view text) {
    return ProcNetdevCollector::ParseSnmpSection(text, "Tcp");
  });
}
BENCHMARK(BM_ProcNetSnmpTcp);

void BM_ProcNetNetstatTcpExt(benchmark::State& state) {
  RunParser(state, "debian12_vm", "proc/net/netstat", [](std::string_view text) {
    return ProcNetdevCollector::ParseSnmpSection(text, "TcpExt");
  });
}
BENCHMARK(BM_ProcNetNetstatTcpExt);

void BM_InfinibandRate(benchmark::State& state) {
  RunParser(state, kHost, "sys/class/infiniband/mlx5_0/ports/1/rate",
            &SysInfinibandCollector::ParseRate);
}
BENCHMARK(BM_InfinibandRate);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
