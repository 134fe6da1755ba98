// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's group commit as a process: many daemons push at once, the service is killed
// (SIGKILL) mid-stream, and after a restart every batch that had been answered 200 is known
// (a resend is a duplicate), and resending everything gives exactly the ledger a clean run gives
// (no batch was half applied).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/time_util.h"
#include "collectors/gpu_metrics.h"
#include "fleet_process.h"
#include "sinks/fleet_push_sink.h"

namespace vigil {
namespace {

namespace gm = gpu_metrics;  // The metric names vigild emits.

using fleet_test::FleetProcess;
using nlohmann::json;
constexpr int64_t kSec = kNanosPerSecond;
constexpr int kHosts = 8;
constexpr int kTicks = 150;

// Host h's report i: its one GPU, held by team-h's job since report 0.
std::string Payload(int h, int i, int64_t t0) {
  const std::string host = "node" + std::to_string(h);
  const int64_t t = t0 + i * 10 * kSec;
  std::vector<Sample> s = {{&gm::kUp, {{"gpu_model", "H100"}, {"gpu_uuid", "G-" + host}}, 1, t},
                           {&gm::kAllocated,
                            {{"gpu_uuid", "G-" + host},
                             {"job_id", "job-" + host},
                             {"model", "m"},
                             {"rule", "env"},
                             {"team", "team-" + std::to_string(h)},
                             {"user", "u"}},
                            10.0 * i,
                            t}};
  std::vector<const Sample*> ptrs = {&s[0], &s[1]};
  return FleetPushSink::EncodePayload(host, host + "-" + std::to_string(i), i, ptrs);
}

TEST(FleetGroupCommitTest, KilledMidStreamLosesNoAcknowledgedBatchAndHalfAppliesNone) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("vigil-fleet-group-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const int64_t now_s = UnixNanos() / kSec;
  const int64_t t0 = (now_s - now_s % 3600 - 3 * 3600) * kSec;
  FleetProcess fleet((dir / "fleet.db").string(), fleet_test::FreePort());
  ASSERT_TRUE(fleet.Start());

  std::mutex mu;
  std::vector<std::pair<int, int>> acked;  // (host, report).
  std::atomic<int> acked_count{0};
  std::vector<std::thread> pushers;
  for (int h = 0; h < kHosts; ++h) {
    pushers.emplace_back([&, h] {
      httplib::Client c(fleet.url());
      c.set_connection_timeout(std::chrono::seconds(2));
      for (int i = 0; i < kTicks; ++i) {
        auto res = c.Post("/api/v1/ingest", Payload(h, i, t0), "application/json");
        if (!res) return;  // The service is gone.
        if (res->status != 200) continue;
        std::lock_guard<std::mutex> lock(mu);
        acked.emplace_back(h, i);
        ++acked_count;
      }
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (acked_count < kHosts * kTicks / 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  fleet.Kill();
  for (std::thread& t : pushers) t.join();
  ASSERT_GE(acked_count, kHosts * kTicks / 4);
  ASSERT_LT(acked_count, kHosts * kTicks) << "the kill came after the stream ended";

  ASSERT_TRUE(fleet.Start());
  httplib::Client c(fleet.url());
  for (const auto& [h, i] : acked) {
    auto res = c.Post("/api/v1/ingest", Payload(h, i, t0), "application/json");
    ASSERT_TRUE(res && res->status == 200);
    EXPECT_TRUE(json::parse(res->body)["duplicate"].get<bool>())
        << "acknowledged batch node" << h << "-" << i << " was lost";
  }
  for (int h = 0; h < kHosts; ++h) {
    for (int i = 0; i < kTicks; ++i) {
      auto res = c.Post("/api/v1/ingest", Payload(h, i, t0), "application/json");
      ASSERT_TRUE(res && res->status == 200);
    }
  }
  auto res = c.Get("/api/v1/attribution?by=team&since=7d");
  ASSERT_TRUE(res && res->status == 200);
  const json a = json::parse(res->body);
  int teams = 0;
  for (const json& row : a["rows"]) {
    if (row["key"].get<std::string>().rfind("team-", 0) != 0) continue;
    ++teams;
    EXPECT_NEAR(row["allocated_gpu_hours"].get<double>() * 3600, 10.0 * (kTicks - 1), 1e-6)
        << row.dump();
  }
  EXPECT_EQ(teams, kHosts);
  fleet.Kill();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
