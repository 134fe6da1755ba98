// SPDX-License-Identifier: Apache-2.0
// vigild with a state directory it cannot write (a unit under ProtectSystem=strict without
// StateDirectory=, a read-only host path): the fleet spool falls back to memory, and both
// /api/v1/status and `vigil status` say so among the reduced features instead of looking ok.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

TEST(VigildStateDirTest, UnwritableStateDirIsAReducedFeatureInStatus) {
  VigildProcess d;
  // A directory below a regular file cannot be made, even by root.
  const std::string blocker = d.dir() + "/not-a-dir";
  ASSERT_TRUE(WriteFileAtomic(blocker, "x").ok());
  const std::string fleet = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  ASSERT_TRUE(d.Spawn({"--state-dir", blocker + "/state", "--fleet-url", fleet}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();

  HttpReply reply = d.Get("/api/v1/status");
  ASSERT_EQ(reply.status, 200) << reply.body;
  nlohmann::json status = nlohmann::json::parse(reply.body, nullptr, false);
  ASSERT_TRUE(status.is_object()) << reply.body;
  std::string reduced;
  for (const auto& r : status["reduced_features"]) {
    if (r.get<std::string>().rfind("sink fleet", 0) == 0) reduced = r.get<std::string>();
  }
  EXPECT_NE(reduced.find("spool"), std::string::npos) << status.dump(2);
  EXPECT_NE(reduced.find("held in memory only"), std::string::npos) << reduced;
  EXPECT_NE(reduced.find(blocker), std::string::npos) << reduced;

  std::string out;
  EXPECT_EQ(RunVigilCli("status --host " + d.rpc_target(), &out), 0) << out;
  const size_t section = out.find("reduced features:");
  ASSERT_NE(section, std::string::npos) << out;
  EXPECT_NE(out.find("held in memory only", section), std::string::npos) << out;
}

TEST(VigildStateDirTest, WritableStateDirIsNotReduced) {
  VigildProcess d;
  const std::string fleet = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  ASSERT_TRUE(d.Spawn({"--state-dir", d.dir() + "/state", "--fleet-url", fleet}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  HttpReply reply = d.Get("/api/v1/status");
  nlohmann::json status = nlohmann::json::parse(reply.body, nullptr, false);
  ASSERT_TRUE(status.is_object()) << reply.body;
  for (const auto& r : status["reduced_features"]) {
    EXPECT_EQ(r.get<std::string>().rfind("sink ", 0), std::string::npos) << r;
  }
}

}  // namespace
}  // namespace vigil::testing
