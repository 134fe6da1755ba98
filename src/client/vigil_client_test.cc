// SPDX-License-Identifier: Apache-2.0
#include "client/vigil_client.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/time_util.h"
#include "base/wait_for.h"
#include "client/vigil_client.hpp"
#include "ipc/fabric_server.h"
#include "ipc/job_metrics.h"
#include "ipc/process_registry.h"

namespace vigil {
namespace {

class ClientTest : public ::testing::Test {
 protected:
  ClientTest()
      : registry_(ProcessRegistryOptions{}, &MonotonicNanos),
        metrics_(&MonotonicNanos),
        server_(&registry_, &metrics_) {
    options_.ipc_name = fmt::format("vigil-client-test-{}", getpid());
    EXPECT_TRUE(server_.Start(options_).ok());
  }

  FabricServerOptions options_;
  ProcessRegistry registry_;
  JobMetrics metrics_;
  FabricServer server_;
};

TEST_F(ClientTest, RegistersWithLabelsAndReceivesATraceRequest) {
  vigil_client_options o;
  vigil_client_options_init(&o);
  o.ipc_name = options_.ipc_name.c_str();
  o.job_id = "train-42";
  o.team = "vision";
  o.framework = "jax";
  char err[256] = "";
  vigil_client* c = vigil_client_open(&o, err, sizeof(err));
  ASSERT_NE(c, nullptr) << err;
  EXPECT_STREQ(vigil_client_job_id(c), "train-42");
  auto p = registry_.Find(getpid());
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->team, "vision");
  EXPECT_EQ(p->source, "vigil_client");

  std::string received;
  vigil_client_set_trace_callback(
      c, [](const char* config, void* user) { *static_cast<std::string*>(user) = config; },
      &received);
  EXPECT_EQ(vigil_client_poll(c), 0);
  ASSERT_TRUE(registry_.Offer(getpid(), "ACTIVITIES_DURATION_MSECS=10", "tr-x"));
  EXPECT_EQ(vigil_client_poll(c), 1);
  EXPECT_EQ(received, "ACTIVITIES_DURATION_MSECS=10");
  vigil_client_close(c);
}

TEST_F(ClientTest, StepReportsBecomeJobMetrics) {
  client::Options o;
  o.ipc_name = options_.ipc_name;
  o.job_id = "train-43";
  o.peak_flops = 1e12;
  std::string error;
  auto handle = client::Client::Open(o, &error);
  ASSERT_NE(handle, nullptr) << error;
  ASSERT_TRUE(handle->ReportSteps(4, 2.0, 4096, 1e11));
  MetricBatch batch;
  ASSERT_TRUE(WaitFor([&] {
    batch.samples.clear();
    MetricWriter out(&batch);
    (void)metrics_.Collect(out);
    return !batch.samples.empty();
  }));
  bool saw_mfu = false;
  for (const Sample& s : batch.samples) {
    if (s.desc->name == "vigil_job_mfu_ratio") {
      saw_mfu = true;
      EXPECT_DOUBLE_EQ(s.value, 0.2);  // 4e11 FLOPs in 2 s on a 1 TFLOP/s device.
      EXPECT_EQ(s.labels.at(0).second, "train-43");
    }
  }
  EXPECT_TRUE(saw_mfu);
  EXPECT_FALSE(handle->ReportSteps(0, 1, 0, 0));
}

TEST_F(ClientTest, BackgroundPollerDeliversThroughTheCallback) {
  client::Options o;
  o.ipc_name = options_.ipc_name;
  auto handle = client::Client::Open(o, nullptr);
  ASSERT_NE(handle, nullptr);
  std::atomic<int> calls{0};
  handle->OnTrace([&](const std::string&) { ++calls; });
  ASSERT_TRUE(handle->StartPolling(5));
  ASSERT_TRUE(registry_.Offer(getpid(), "ACTIVITIES_ITERATIONS=2", "tr-y"));
  EXPECT_TRUE(WaitFor([&] { return calls.load() == 1; }));
}

TEST(ClientNoDaemonTest, OpenFailsWithAMessage) {
  vigil_client_options o;
  vigil_client_options_init(&o);
  o.ipc_name = "vigil-nobody-listens-here";
  o.timeout_ms = 50;
  char err[256] = "";
  EXPECT_EQ(vigil_client_open(&o, err, sizeof(err)), nullptr);
  EXPECT_NE(std::string(err).find("register with vigild"), std::string::npos) << err;
}

}  // namespace
}  // namespace vigil
