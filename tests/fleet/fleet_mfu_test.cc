// SPDX-License-Identifier: Apache-2.0
// MFU end to end: this test process registers with a real vigild (simulated GPUs, pushing to a
// real vigil-fleet with --fleet-url) through libvigil_client as a process of the simulated
// training job and reports its steps; the fleet's job API, `vigil fleet job`, `vigil fleet jobs`
// and `vigil fleet report --by job` then show the job's MFU, model FLOP/s, step time and
// device-seconds per input byte, and the
// job's identity carries the framework label the GPU counters now have.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/time_util.h"
#include "client/vigil_client.h"
#include "fleet_process.h"
#include "vigild_process.h"

namespace vigil {
namespace {

using nlohmann::json;

constexpr char kJob[] = "sim-train-1001";  // The simulated backend's training job (GPUs 0-3).

TEST(FleetMfuTest, ClientStepReportsReachTheFleetJobApiAndCli) {
  const std::string vigil = std::string(VIGIL_BIN_DIR) + "/vigil";
  if (access(vigil.c_str(), X_OK) != 0) GTEST_SKIP() << "vigil CLI not built";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vigil-fleet-mfu-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  fleet_test::FleetProcess fleet((dir / "fleet.db").string(), fleet_test::FreePort());
  ASSERT_TRUE(fleet.Start());
  testing::VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({"--interval", "1s", "--gpu-backend", "sim", "--fleet-url", fleet.url(),
                            "--state-dir", (dir / "state").string()}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();

  vigil_client_options o;
  vigil_client_options_init(&o);
  const std::string ipc_name = daemon.ipc_name();
  o.ipc_name = ipc_name.c_str();
  o.job_id = kJob;
  o.model = "llama-70b";
  o.framework = "pytorch";
  o.peak_flops = 1e15;
  o.gpu = 0;
  char err[256] = "";
  vigil_client* client = vigil_client_open(&o, err, sizeof err);
  ASSERT_NE(client, nullptr) << err << "\n" << daemon.Log();

  // 4 steps of 0.5 s at 2e14 model FLOPs each: 4e14 FLOP/s on a 1e15 FLOP/s device, MFU 0.4;
  // 2 device-seconds for 1 MiB of input.
  constexpr double kSecondsPerByte = 2.0 / (1 << 20);
  httplib::Client http(fleet.url());
  json job;
  const int64_t deadline = MonotonicNanos() + 90 * kNanosPerSecond;
  while (MonotonicNanos() < deadline) {
    ASSERT_EQ(vigil_client_report_steps(client, 4, 2.0, 1 << 20, 2e14), 0);
    auto res = http.Get(std::string("/api/v1/jobs/") + kJob);
    if (res && res->status == 200) {
      job = json::parse(res->body, nullptr, false);
      if (!job.is_discarded() && job["mfu_ratio"].is_number() && job["gpu_hours"].get<double>() > 0)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  vigil_client_close(client);
  ASSERT_TRUE(job.is_object() && job["mfu_ratio"].is_number()) << job.dump(2) << "\n"
                                                               << daemon.Log();
  EXPECT_NEAR(job["mfu_ratio"].get<double>(), 0.4, 1e-9) << job.dump(2);
  EXPECT_NEAR(job["step_seconds"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(job["model_flops_per_step"].get<double>(), 2e14, 1);
  EXPECT_NEAR(job["model_flops_per_second"].get<double>(), 4e14, 1);
  ASSERT_TRUE(job["device_seconds_per_input_byte"].is_number()) << job.dump(2);
  EXPECT_NEAR(job["device_seconds_per_input_byte"].get<double>(), kSecondsPerByte, 1e-18);
  bool framework = false;
  for (const json& id : job["identities"]) framework |= id["framework"] == "pytorch";
  EXPECT_TRUE(framework) << job.dump(2);

  std::string out;
  auto Run = [](const std::vector<std::string>& argv, std::string* text) {
    text->clear();  // RunCapture appends.
    return fleet_test::RunCapture(argv, text);
  };
  ASSERT_EQ(Run({vigil, "fleet", "job", kJob, "--fleet", fleet.url()}, &out), 0) << out;
  EXPECT_NE(out.find("MFU              40.0%"), std::string::npos) << out;
  EXPECT_NE(out.find("step seconds     0.500"), std::string::npos) << out;
  EXPECT_NE(out.find("device-s per GB  1907\n"), std::string::npos) << out;  // 2 s / 2^20 B.
  ASSERT_EQ(Run({vigil, "fleet", "jobs", "--fleet", fleet.url()}, &out), 0);
  EXPECT_NE(out.find(kJob), std::string::npos) << out;
  EXPECT_NE(out.find("40.0%"), std::string::npos) << out;
  EXPECT_NE(out.find("DEV-S/GB"), std::string::npos) << out;
  EXPECT_NE(out.find(" 1907"), std::string::npos) << out;
  ASSERT_EQ(
      Run({vigil, "fleet", "report", "--by", "job", "--format", "csv", "--fleet", fleet.url()},
          &out),
      0);
  EXPECT_NE(out.find(",mfu_ratio,model_flops_per_second,step_seconds,"
                     "device_seconds_per_input_byte\n"),
            std::string::npos)
      << out;
  const size_t line = out.find(std::string("\n") + kJob + ",");
  ASSERT_NE(line, std::string::npos) << out;
  std::vector<std::string> cells;
  std::string cell;
  for (char c : out.substr(line + 1, out.find('\n', line + 1) - line - 1)) {
    if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(cell);
  ASSERT_EQ(cells.size(), 12u) << out;
  EXPECT_NEAR(std::stod(cells[8]), 0.4, 1e-9) << out;
  EXPECT_NEAR(std::stod(cells[9]), 4e14, 1) << out;
  EXPECT_NEAR(std::stod(cells[10]), 0.5, 1e-9) << out;
  EXPECT_NEAR(std::stod(cells[11]), kSecondsPerByte, 1e-18) << out;
  EXPECT_NE(Run({vigil, "fleet", "job", "no-such-job", "--fleet", fleet.url()}, &out), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vigil
