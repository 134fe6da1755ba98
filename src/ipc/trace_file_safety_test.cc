// SPDX-License-Identifier: Apache-2.0
// The attacks on trace files a local user could make before the trace root was the daemon's
// own: a symlink planted in the root to get a root-owned directory made world-writable, and a
// link planted at the announced trace file to make the daemon stat and upload a root-only file.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"
#include "ipc/trace_sessions.h"

namespace vigil {
namespace {

using testing_util::AsNobody;
using testing_util::FakeClock;
using testing_util::kNobody;
using testing_util::ModeOf;
using testing_util::TempDir;

constexpr int64_t kSecond = 1000000000;

class TraceFileSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "the attacks need root (a daemon) and a second user";
    }
    chmod(tmp_.path().c_str(), 01777);  // The root's parent is shared, as /tmp is.
    root_ = tmp_.path() + "/vigil-traces";
    victim_ = tmp_.path() + "/victim";  // Stands in for /etc or /root/.ssh.
    ASSERT_EQ(mkdir(victim_.c_str(), 0700), 0);
    ProcessRegistryOptions ro;
    ro.match_only_live = false;  // The registered pids are made up.
    ro.verify_credentials = false;
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
  }

  std::unique_ptr<TraceService> Service() {
    TraceServiceOptions to;
    to.trace_root = root_;
    return std::make_unique<TraceService>(to, registry_.get());
  }
  void PollAs(int pid, int uid) {
    (void)registry_->Poll({pid, uid, uid}, KinetoRequest{2, 5, {pid}}, IpcAddress{});
  }

  TempDir tmp_;
  std::string root_, victim_;
  FakeClock clock_;
  std::unique_ptr<ProcessRegistry> registry_;
};

TEST_F(TraceFileSafetyTest, APlantedRootWithASymlinkChangesNothingOutsideIt) {
  // The attacker makes the root before the daemon and plants ROOT/evil/link -> victim.
  ASSERT_EQ(AsNobody([&] {
              return mkdir(root_.c_str(), 0777) == 0 && chmod(root_.c_str(), 0777) == 0 &&
                             mkdir((root_ + "/evil").c_str(), 0777) == 0 &&
                             symlink(victim_.c_str(), (root_ + "/evil/link").c_str()) == 0
                         ? 0
                         : 1;
            }),
            0);
  auto service = Service();
  EXPECT_FALSE(service->OpenRoot().ok());
  PollAs(600, kNobody);
  TraceRequest req;
  req.job_id = "5";
  req.log_file = root_ + "/evil/link/x.json";
  EXPECT_FALSE(service->Start(req).ok());
  EXPECT_EQ(ModeOf(victim_), 0700u);
}

TEST_F(TraceFileSafetyTest, ALinkUnderTheDaemonsRootIsNeverFollowed) {
  auto service = Service();
  ASSERT_TRUE(service->OpenRoot().ok());
  EXPECT_EQ(ModeOf(root_), 0755u);
  // Nobody else can plant anything in the root now; root itself planting a link changes nothing.
  EXPECT_EQ(AsNobody([&] { return mkdir((root_ + "/evil").c_str(), 0777) == 0 ? 0 : 1; }), 1);
  ASSERT_EQ(mkdir((root_ + "/evil").c_str(), 0755), 0);
  ASSERT_EQ(symlink(victim_.c_str(), (root_ + "/evil/link").c_str()), 0);
  PollAs(600, kNobody);
  TraceRequest req;
  req.job_id = "5";
  req.log_file = root_ + "/evil/link/x.json";
  auto session = service->Start(req);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE(session->log_file.rewritten);
  const std::string dir = root_ + "/" + session->trace_id;
  EXPECT_EQ(session->log_file.path, dir + "/x.json");
  EXPECT_EQ(ModeOf(victim_), 0700u);
  // The trace directory is the traced user's alone.
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kNobody));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(session->processes[0].path, dir + "/x_600.json");
}

TEST_F(TraceFileSafetyTest, ALinkAtTheAnnouncedFileIsRefusedAndNothingIsReported) {
  auto service = Service();
  PollAs(600, kNobody);
  TraceRequest req;
  req.job_id = "5";
  auto session = service->Start(req);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::string path = session->processes[0].path;
  const std::string secret = victim_ + "/secret";
  ASSERT_TRUE(WriteFileAtomic(secret, "root only\n", 0600).ok());
  // Only the traced user can reach the directory; the link it plants there is still refused.
  ASSERT_EQ(AsNobody([&] { return symlink(secret.c_str(), path.c_str()) == 0 ? 0 : 1; }), 0);
  PollAs(600, kNobody);  // Delivered.
  clock_.Advance(kSecond);
  service->Tick();
  auto s = service->Get(session->trace_id);
  ASSERT_EQ(s->processes.size(), 1u);
  EXPECT_EQ(s->processes[0].state, TraceState::kFailed);
  EXPECT_NE(s->processes[0].reason.find("refused"), std::string::npos) << s->processes[0].reason;
  EXPECT_EQ(s->processes[0].size_bytes, 0u);
  EXPECT_EQ(TraceSessionToJson(*s)["processes"][0].count("size_bytes"), 0u);
}

TEST_F(TraceFileSafetyTest, AFileOfAnotherOwnerIsRefused) {
  auto service = Service();
  PollAs(600, kNobody);
  TraceRequest req;
  req.job_id = "5";
  auto session = service->Start(req);
  ASSERT_TRUE(session.ok());
  // A root-owned file where the traced user's should be (a hard link to it would look the same).
  ASSERT_TRUE(WriteFileAtomic(session->processes[0].path, "{}", 0600).ok());
  PollAs(600, kNobody);
  service->Tick();
  auto s = service->Get(session->trace_id);
  EXPECT_EQ(s->processes[0].state, TraceState::kFailed);
  EXPECT_NE(s->processes[0].reason.find("owned by uid 0"), std::string::npos);

  // The traced user's own regular file is watched and written as before.
  PollAs(601, kNobody);
  req.pids = {601};
  auto own = service->Start(req);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  const std::string path = own->processes[0].path;
  ASSERT_EQ(AsNobody([&] {
              FILE* f = fopen(path.c_str(), "w");
              return f != nullptr && fputs("{\"traceEvents\":[]}", f) >= 0 && fclose(f) == 0 ? 0
                                                                                             : 1;
            }),
            0);
  PollAs(601, kNobody);
  service->Tick();
  clock_.Advance(3 * kSecond);
  service->Tick();
  auto written = service->Get(own->trace_id);
  EXPECT_EQ(written->processes[0].state, TraceState::kWritten) << written->processes[0].reason;
  EXPECT_EQ(written->processes[0].size_bytes, 18u);
}

TEST_F(TraceFileSafetyTest, ProcessesOfSeveralUsersGetOneDirectoryEach) {
  auto service = Service();
  PollAs(600, kNobody);
  PollAs(700, 0);
  TraceRequest req;
  req.job_id = "5";
  auto session = service->Start(req);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ(session->processes.size(), 2u);
  const std::string dir = root_ + "/" + session->trace_id;
  EXPECT_EQ(ModeOf(dir), 0755u);
  for (const TraceProcess& p : session->processes) {
    const std::string own = dir + "/u" + std::to_string(p.uid);
    EXPECT_EQ(p.path.rfind(own + "/", 0), 0u) << p.path;
    struct stat st {};
    ASSERT_EQ(stat(own.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, static_cast<uid_t>(p.uid));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
  }
}

}  // namespace
}  // namespace vigil
