// SPDX-License-Identifier: Apache-2.0
// vigil-fleet's least privilege, run as a process: it refuses root without --allow-root, runs
// as an unprivileged user, and checks that its token file is private (--strict-permissions).
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/wait_for.h"
#include "fleet_process.h"

namespace vigil {
namespace {

constexpr uid_t kNobody = 65534;

struct FleetRun {
  pid_t pid = -1;
  std::string err_path;
};

// Starts vigil-fleet with `args`, as `uid` when given; stderr goes to a file.
FleetRun Start(const std::vector<std::string>& args, const std::string& dir,
               std::optional<uid_t> uid) {
  FleetRun run;
  run.err_path = dir + "/stderr";
  run.pid = fork();
  if (run.pid == 0) {
    const int err = open(run.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    dup2(err, STDERR_FILENO);
    if (uid && (setgroups(0, nullptr) != 0 || setgid(*uid) != 0 || setuid(*uid) != 0)) {
      _exit(126);
    }
    // Another user runs the copy in `dir`: the build tree may sit where it cannot reach.
    const std::string binary =
        uid ? dir + "/vigil-fleet" : std::string(VIGIL_BIN_DIR) + "/vigil-fleet";
    std::vector<std::string> argv_text = {binary, "serve"};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return run;
}

std::optional<int> Reap(pid_t pid, double timeout_s) {
  int status = 0;
  if (!WaitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, timeout_s)) {
    return std::nullopt;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class FleetPrivilegeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root (CI runs as root)";
    }
    char tmpl[] = "/tmp/vigil-fleet-priv-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(chown(dir_.c_str(), kNobody, kNobody), 0);  // The ledger's directory.
    std::error_code ec;
    std::filesystem::copy_file(std::string(VIGIL_BIN_DIR) + "/vigil-fleet", dir_ + "/vigil-fleet",
                               ec);
    ASSERT_FALSE(ec) << ec.message();
    ASSERT_EQ(chmod((dir_ + "/vigil-fleet").c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) {
      (void)system(("rm -rf " + dir_).c_str());
    }
  }
  std::vector<std::string> Args(int port) const {
    return {"--listen", "127.0.0.1:" + std::to_string(port), "--db", dir_ + "/fleet.db"};
  }
  std::string dir_;
};

TEST_F(FleetPrivilegeTest, RootWithoutAllowRootExitsOneWithAOneLineReason) {
  FleetRun run = Start(Args(fleet_test::FreePort()), dir_, std::nullopt);

  const std::optional<int> rc = Reap(run.pid, 20);

  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 1);
  const std::string err = ReadSmallFile(run.err_path).value_or("");
  EXPECT_EQ(err,
            "vigil-fleet: refusing to run as root: start it as an unprivileged user (e.g. the "
            "vigil system user) or pass --allow-root\n");
  EXPECT_FALSE(PathExists(dir_ + "/fleet.db"));
}

TEST_F(FleetPrivilegeTest, RunsAsAnUnprivilegedUserAndServes) {
  const int port = fleet_test::FreePort();
  FleetRun run = Start(Args(port), dir_, kNobody);
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(std::chrono::milliseconds(200));

  const bool healthy = WaitFor(
      [&] {
        auto res = client.Get("/healthz");
        return res && res->status == 200;
      },
      20, std::chrono::milliseconds(20));
  const std::string status =
      ReadSmallFile("/proc/" + std::to_string(run.pid) + "/status").value_or("");
  kill(run.pid, SIGTERM);
  const std::optional<int> rc = Reap(run.pid, 20);

  EXPECT_TRUE(healthy) << ReadSmallFile(run.err_path).value_or("");
  EXPECT_NE(status.find("Uid:\t65534\t65534\t65534\t65534"), std::string::npos) << status;
  EXPECT_EQ(rc, std::optional<int>(0));
}

TEST_F(FleetPrivilegeTest, WorldReadableTokenFileWarnsAndStrictPermissionsRefusesIt) {
  const std::string tokens = dir_ + "/tokens";
  ASSERT_TRUE(WriteFileAtomic(tokens, "* s3cret-token\n", 0644).ok());
  ASSERT_EQ(chmod(tokens.c_str(), 0644), 0);
  ASSERT_EQ(chown(tokens.c_str(), kNobody, kNobody), 0);
  std::vector<std::string> strict = Args(fleet_test::FreePort());
  strict.insert(strict.end(), {"--token-file", tokens, "--strict-permissions"});
  std::vector<std::string> lenient = Args(fleet_test::FreePort());
  lenient.insert(lenient.end(), {"--token-file", tokens});

  FleetRun refused = Start(strict, dir_, kNobody);
  const std::optional<int> refused_rc = Reap(refused.pid, 20);
  const std::string refused_err = ReadSmallFile(refused.err_path).value_or("");
  FleetRun warned = Start(lenient, dir_, kNobody);
  const bool logged = WaitFor(
      [&] {
        return ReadSmallFile(warned.err_path).value_or("").find("flag=--token-file") !=
               std::string::npos;
      },
      20);
  const std::string warned_err = ReadSmallFile(warned.err_path).value_or("");
  kill(warned.pid, SIGTERM);
  static_cast<void>(Reap(warned.pid, 20));

  EXPECT_EQ(refused_rc, std::optional<int>(1));
  EXPECT_NE(refused_err.find("--token-file " + tokens +
                             " is mode 0644: readable by group and "
                             "others; refusing it under --strict-permissions"),
            std::string::npos)
      << refused_err;
  EXPECT_TRUE(logged) << warned_err;
  EXPECT_NE(warned_err.find("secret file is open to more than its owner"), std::string::npos)
      << warned_err;
}

}  // namespace
}  // namespace vigil
