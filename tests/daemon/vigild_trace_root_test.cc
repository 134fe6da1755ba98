// SPDX-License-Identifier: Apache-2.0
// The trace-file attacks, end to end through the real vigild: a job of an unprivileged user
// (uid 65534, a forked child running the spec-written Kineto client) is traced on demand over
// loopback. Its trace directory is its own (0700) and nobody else can plant anything under the
// daemon's trace root; a link the job plants at its announced file, pointing at a file only root
// may read, is refused: the trace ends failed and nothing about the file is reported.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "ipc/trace_config.h"
#include "kineto_spec_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

constexpr int kNobody = 65534;
constexpr int64_t kJobId = 5151;
constexpr int32_t kActivities = 2;

enum class Job { kWritesItsTrace, kPlantsALink };

// Forks a child that becomes uid 65534 and behaves as a Kineto process of job kJobId until it
// is killed: it polls the daemon and, given a config, writes its trace or plants a link there.
pid_t StartJobAsNobody(const std::string& ipc_name, Job behaviour, const std::string& secret) {
  const pid_t child = fork();
  if (child != 0) {
    return child;
  }
  if (setgid(kNobody) != 0 || setuid(kNobody) != 0) {
    _exit(100);
  }
  testing_util::KinetoSpecClient kineto("vigil-kineto-nobody-" + std::to_string(getpid()),
                                        ipc_name);
  const auto pids = testing_util::OwnAncestorPids();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    auto config = kineto.Poll(kActivities, kJobId, pids);
    const std::string key = "ACTIVITIES_LOG_FILE=";
    if (config && config->find(key) != std::string::npos) {
      const size_t at = config->find(key) + key.size();
      const std::string log = config->substr(at, config->find('\n', at) - at);
      const std::string file = KinetoTraceFileForPid(log, static_cast<int32_t>(getpid()));
      if (behaviour == Job::kWritesItsTrace) {
        (void)WriteFileAtomic(file, R"({"traceEvents": []})");
      } else {
        (void)symlink(secret.c_str(), file.c_str());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  _exit(0);
}

class VigildTraceRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "the attack needs a root daemon and a second user";
    }
    chmod(daemon_.dir().c_str(), 0711);  // The job's user must reach the trace root.
    ASSERT_TRUE(daemon_.Spawn({"--interval", "60s"}));
    ASSERT_TRUE(daemon_.WaitHealthy()) << daemon_.Log();
    root_ = daemon_.dir() + "/traces";
  }
  void TearDown() override {
    if (job_ > 0) {
      kill(job_, SIGKILL);
      waitpid(job_, nullptr, 0);
    }
  }
  nlohmann::json Trace(const std::string& extra) {
    std::string out;
    RunVigilCli("trace --job-id " + std::to_string(kJobId) +
                    " --duration-ms 100 --wait --wait-timeout 60s --json --host " +
                    daemon_.rpc_target() + extra,
                &out);
    auto results = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(results.is_array() && results.size() == 1) << out << daemon_.Log();
    return results.is_array() && results.size() == 1 ? results[0] : nlohmann::json();
  }

  VigildProcess daemon_;
  std::string root_;
  pid_t job_ = -1;
};

TEST_F(VigildTraceRootTest, TheJobsDirectoryIsItsOwnAndNothingCanBePlantedInTheRoot) {
  struct stat st {};
  ASSERT_EQ(stat(root_.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  // The attacker cannot plant ROOT/evil/link -> /etc any more.
  const pid_t planter = fork();
  if (planter == 0) {
    _exit(setuid(kNobody) == 0 && mkdir((root_ + "/evil").c_str(), 0777) == 0 ? 0 : 1);
  }
  int planted = 0;
  waitpid(planter, &planted, 0);
  EXPECT_EQ(WEXITSTATUS(planted), 1);

  job_ = StartJobAsNobody(daemon_.ipc_name(), Job::kWritesItsTrace, "");
  const nlohmann::json host = Trace(" --log-file " + root_ + "/evil/link/x.json");
  ASSERT_EQ(host["processes"].size(), 1u) << host.dump();
  EXPECT_EQ(host["processes"][0]["state"], "written") << host.dump() << daemon_.Log();
  const std::string path = host["processes"][0]["path"];
  const std::string dir = path.substr(0, path.rfind('/'));
  EXPECT_EQ(dir, root_ + "/" + host["trace_id"].get<std::string>());
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kNobody));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(path.substr(path.rfind('/') + 1), "x_" + std::to_string(job_) + ".json");
}

TEST_F(VigildTraceRootTest, ALinkAtTheAnnouncedFileIsRefusedAndNotReported) {
  const std::string secret = daemon_.dir() + "/secret";
  ASSERT_TRUE(WriteFileAtomic(secret, std::string(4321, 's'), 0600).ok());
  job_ = StartJobAsNobody(daemon_.ipc_name(), Job::kPlantsALink, secret);
  const nlohmann::json host = Trace("");
  ASSERT_EQ(host["processes"].size(), 1u) << host.dump();
  const nlohmann::json& proc = host["processes"][0];
  EXPECT_EQ(proc["state"], "failed") << host.dump();
  EXPECT_NE(proc.value("reason", "").find("refused"), std::string::npos) << host.dump();
  EXPECT_EQ(proc.value("size_bytes", -1), -1) << host.dump();  // The CLI's "not known".
  EXPECT_EQ(host.dump().find("4321"), std::string::npos) << host.dump();
}

}  // namespace
}  // namespace vigil::testing
