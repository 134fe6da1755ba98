// SPDX-License-Identifier: Apache-2.0
// Ledger fixtures for the profiling tests: a temporary ledger (temp_ledger.h) and jobs pushed
// minute by minute through LedgerStore::Ingest as vigild would report them (per GPU: allocated and
// busy seconds, plus vigil_daemon_info with the daemon's rpc_address). Owner: fleet. Test-only.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fleet/fleet_test_util.h"
#include "fleet/ledger_store.h"
#include "fleet/temp_ledger.h"

namespace vigil::fleet_test {

// A minute boundary (2026-11-30T00:00:00Z) the fixtures count from.
inline constexpr int64_t kT0 = 1796083200LL * kSec;

struct SimJob {
  std::string job_id;
  std::string host;
  std::string gpu_uuid;
  int64_t first_minute = 0;  // Minutes after kT0 its reports start.
  std::vector<double> busy;  // Busy ratio per minute (cycled).
};

class LedgerFixture : public TempLedger {
 public:
  // Pushes minutes [0, minutes) of every job, one batch per host and minute.
  void Push(const std::vector<SimJob>& jobs, int minutes,
            const std::map<std::string, std::string>& rpc_addresses) {
    std::map<std::string, std::pair<double, double>> totals;  // gpu -> alloc, busy
    for (int m = 0; m < minutes; ++m) {
      const int64_t t = kT0 + m * 60 * kSec;
      std::map<std::string, std::vector<IngestSample>> by_host;
      for (const SimJob& j : jobs) {
        if (m < j.first_minute) continue;
        auto& tot = totals[j.gpu_uuid];
        if (m > j.first_minute) {
          tot.first += 60;
          tot.second += 60 * j.busy[static_cast<size_t>(m) % j.busy.size()];
        }
        JobCounters c;
        c.job_id = j.job_id;
        c.alloc_s = tot.first;
        c.busy_s = tot.second;
        AddGpuTick(&by_host[j.host], j.gpu_uuid, t, 0, 0.5, {c});
      }
      for (auto& [host, samples] : by_host) {
        auto it = rpc_addresses.find(host);
        if (it != rpc_addresses.end()) {
          samples.push_back(S("vigil_daemon_info", false,
                              {{"rpc_address", it->second}, {"version", "0.1.0"}}, 1, t));
        }
        const std::string id = host + "-" + std::to_string(m);
        auto r = store()->Ingest(MakeBatch(host, id, m + 1, std::move(samples)), t);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
      }
    }
  }
};

}  // namespace vigil::fleet_test
