// SPDX-License-Identifier: Apache-2.0
#include "daemon/api.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "base/file_util.h"
#include "base/time_util.h"

namespace vigil::daemon {
namespace {

class DaemonApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    view_.store = &store_;
    RegisterDaemonMethods(&view_, &dispatcher_);
  }
  nlohmann::json Call(const std::string& text, const CallerInfo& caller = CallerInfo{}) {
    nlohmann::json request = nlohmann::json::parse(text, nullptr, false);
    EXPECT_FALSE(request.is_discarded()) << text;
    return dispatcher_.Dispatch(request, caller);
  }
  static std::string ErrorOf(const nlohmann::json& reply) { return reply.value("error", ""); }

  SeriesStore store_;
  DaemonView view_;
  RpcDispatcher dispatcher_;
};

// Finding: vigilRange accepted {"start_ns": 1e300, "end_ns": "x"}.
TEST_F(DaemonApiTest, RangeTimesMustBeIntegersInRange) {
  nlohmann::json reply = Call(R"({"fn":"vigilRange","start_ns":1e300,"end_ns":"x"})");
  EXPECT_NE(ErrorOf(reply).find("must be an integer number of nanoseconds"), std::string::npos)
      << reply.dump();
  for (const char* bad :
       {R"("end_ns":"x")", R"("start_ns":1e300)", R"("start_ns":-5)",
        R"("end_ns":18446744073709551615)", R"("step_ns":1.5)", R"("selector":7)"}) {
    nlohmann::json r = Call(std::string(R"({"fn":"vigilRange",)") + bad + "}");
    EXPECT_FALSE(ErrorOf(r).empty()) << bad << " -> " << r.dump();
  }
  EXPECT_NE(ErrorOf(Call(R"({"fn":"vigilRange","start_ns":10,"end_ns":5})")).find("after"),
            std::string::npos);
  EXPECT_FALSE(ErrorOf(Call(R"({"fn":"vigilLatest","selector":["a"]})")).empty());
}

// Finding: full-range queries stalled the daemon; the work one query may ask for is bounded.
TEST_F(DaemonApiTest, RangeWorkIsBounded) {
  const int64_t now = UnixNanos();
  nlohmann::json raw =
      Call(R"({"fn":"vigilRange","start_ns":0,"end_ns":)" + std::to_string(now) + "}");
  EXPECT_NE(ErrorOf(raw).find("too large"), std::string::npos) << raw.dump();
  nlohmann::json steps = Call(R"({"fn":"vigilRange","start_ns":0,"end_ns":)" + std::to_string(now) +
                              R"(,"step_ns":1})");
  EXPECT_NE(ErrorOf(steps).find("at most 11000 steps"), std::string::npos) << steps.dump();
  nlohmann::json ok =
      Call(R"({"fn":"vigilRange","start_ns":)" + std::to_string(now - 60 * kNanosPerSecond) +
           R"(,"end_ns":)" + std::to_string(now) + "}");
  EXPECT_TRUE(ok.contains("series")) << ok.dump();
  EXPECT_TRUE(Call(R"({"fn":"vigilRange"})").contains("series"));
  EXPECT_TRUE(dispatcher_.IsHeavy({{"fn", "vigilRange"}}));
  EXPECT_TRUE(dispatcher_.IsHeavy({{"fn", "vigilProcesses"}}));
}

// Finding: any local user could list every watched process; now only root sees others'.
TEST_F(DaemonApiTest, ProcessesOfOtherUsersAreShownOnlyToPrivilegedCallers) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to give fixture processes owners";
  }
  char dir[] = "/tmp/vgl-api-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string proc = dir;
  for (const auto& [pid, uid] : {std::pair{100, 1000}, std::pair{200, 0}}) {
    const std::string pid_dir = proc + "/" + std::to_string(pid);
    ASSERT_TRUE(MakeDirs(pid_dir).ok());
    ASSERT_TRUE(WriteFileAtomic(pid_dir + "/comm", "python\n").ok());
    ASSERT_EQ(chown(pid_dir.c_str(), uid, uid), 0);
  }
  view_.proc_root = proc;
  view_.watch_list = std::make_shared<WatchList>();
  view_.watch_list->Watch(100, "gpu", UnixNanos());
  view_.watch_list->Watch(200, "gpu", UnixNanos());
  CallerInfo user;
  user.transport = CallerInfo::Transport::kTcp;
  user.uid = 1000;
  nlohmann::json own = Call(R"({"fn":"vigilProcesses"})", user);
  ASSERT_EQ(own["processes"].size(), 1u) << own.dump();
  EXPECT_EQ(own["processes"][0]["pid"], 100);
  user.uid = -1;  // Unknown: sees nobody's.
  EXPECT_EQ(Call(R"({"fn":"vigilProcesses"})", user)["processes"].size(), 0u);
  user.uid = 0;
  EXPECT_EQ(Call(R"({"fn":"vigilProcesses"})", user)["processes"].size(), 2u);
  std::filesystem::remove_all(proc);
}

}  // namespace
}  // namespace vigil::daemon
