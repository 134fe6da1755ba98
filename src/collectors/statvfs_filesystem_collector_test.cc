// SPDX-License-Identifier: Apache-2.0
#include "collectors/statvfs_filesystem_collector.h"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

// A statvfs stand-in: every filesystem is 1 TB with 400 GB free, except /data (8 TB) and
// /boot/efi (permission denied). Records the mount points asked for.
struct FakeStatFs {
  std::vector<std::string>* calls;
  StatusOr<FsStats> operator()(const std::string& mount_point) const {
    calls->push_back(mount_point);
    if (mount_point == "/boot/efi") {
      return PermissionDeniedError("statvfs /boot/efi: Permission denied");
    }
    FsStats st{.size_bytes = 1000000000000,
               .free_bytes = 400000000000,
               .avail_bytes = 350000000000,
               .inodes = 1000,
               .inodes_free = 400};
    if (mount_point == "/data") {
      st.size_bytes = 8000000000000;
    }
    return st;
  }
};

std::set<std::string> MountPoints(const MetricBatch& batch) {
  std::set<std::string> out;
  for (const Sample& s : batch.samples) {
    out.emplace(LabelValue(s.labels, "mountpoint"));
  }
  return out;
}

TEST(StatvfsFilesystemCollectorTest, SkipsPseudoFilesystemsAndDuplicates) {
  std::vector<std::string> calls;
  StatvfsFilesystemCollector collector(FixturePaths("cgroupv2_numa_ib_host"),
                                       StatvfsFilesystemOptions{.statfs = FakeStatFs{&calls}});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::set<std::string> expected = {"/",        "/boot/efi",          "/data",
                                          "/dev/shm", "/mnt/scratch space", "/run"};
  EXPECT_EQ(MountPoints(r.batch), expected);
  EXPECT_EQ(calls.size(), expected.size());
  const Labels data = {{"mountpoint", "/data"}};
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_size_bytes", data), 8e12);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_used_bytes", data), 7.6e12);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_readonly", data), 1);  // Last mount wins.
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_size_bytes",
                      {{"mountpoint", "/data"}, {"device", "/dev/nvme1n1"}, {"fstype", "xfs"}}),
            8e12);
}

TEST(StatvfsFilesystemCollectorTest, ReportsSizesFromStatvfs) {
  std::vector<std::string> calls;
  StatvfsFilesystemCollector collector(FixturePaths("cgroupv2_numa_ib_host"),
                                       StatvfsFilesystemOptions{.statfs = FakeStatFs{&calls}});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  const Labels root = {{"mountpoint", "/"}};
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_size_bytes", root), 1e12);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_free_bytes", root), 4e11);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_avail_bytes", root), 3.5e11);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_used_bytes", root), 6e11);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_inodes", root), 1000);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_inodes_free", root), 400);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_readonly", root), 0);
  EXPECT_EQ(
      FindValue(r.batch, "vigil_host_filesystem_readonly", {{"mountpoint", "/mnt/scratch space"}}),
      1);
}

TEST(StatvfsFilesystemCollectorTest, StatvfsFailureIsADeviceErrorNotACollectorFailure) {
  std::vector<std::string> calls;
  StatvfsFilesystemCollector collector(FixturePaths("cgroupv2_numa_ib_host"),
                                       StatvfsFilesystemOptions{.statfs = FakeStatFs{&calls}});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok());
  const Labels efi = {{"mountpoint", "/boot/efi"}};
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_device_error", efi), 1);
  EXPECT_FALSE(FindValue(r.batch, "vigil_host_filesystem_size_bytes", efi));
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_device_error", {{"mountpoint", "/"}}), 0);
}

// A gate a test opens when it wants the blocked statvfs of /data (a dead NFS mount) to return.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> data_calls{0};
};

TEST(StatvfsFilesystemCollectorTest, BlockedMountMissesItsDeadlineAndOthersKeepTheirNumbers) {
  auto gate = std::make_shared<Gate>();
  std::vector<std::string> calls;
  std::mutex calls_mu;
  StatvfsFilesystemOptions options;
  options.statfs_timeout = std::chrono::milliseconds(100);
  options.statfs = [gate, &calls, &calls_mu](const std::string& mp) -> StatusOr<FsStats> {
    if (mp == "/data") {
      ++gate->data_calls;
      std::unique_lock lock(gate->mu);
      gate->cv.wait(lock, [&] { return gate->open; });
    }
    std::lock_guard lock(calls_mu);
    return FakeStatFs{&calls}(mp);
  };
  StatvfsFilesystemCollector collector(FixturePaths("cgroupv2_numa_ib_host"), options);
  const Labels data = {{"mountpoint", "/data"}};

  const auto start = std::chrono::steady_clock::now();
  auto first = CollectOnce(collector);
  ASSERT_TRUE(first.status.ok()) << first.status.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(FindValue(first.batch, "vigil_host_filesystem_device_error", data), 1);
  EXPECT_FALSE(FindValue(first.batch, "vigil_host_filesystem_size_bytes", data));
  EXPECT_EQ(FindValue(first.batch, "vigil_host_filesystem_size_bytes", {{"mountpoint", "/"}}),
            1e12);

  // While it stays blocked, later ticks do not pile up threads on it.
  auto second = CollectOnce(collector);
  EXPECT_EQ(FindValue(second.batch, "vigil_host_filesystem_device_error", data), 1);
  EXPECT_EQ(gate->data_calls.load(), 1);

  {
    std::lock_guard lock(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  // Once the stuck call returns, the mount is asked again and reports its size.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::optional<double> size;
  while (!size && std::chrono::steady_clock::now() < deadline) {
    size = FindValue(CollectOnce(collector).batch, "vigil_host_filesystem_size_bytes", data);
    if (!size) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(size, 8e12);
}

TEST(StatvfsFilesystemCollectorTest, ReadsCapturedDebianVm) {
  std::vector<std::string> calls;
  StatvfsFilesystemCollector collector(FixturePaths("debian12_vm"),
                                       StatvfsFilesystemOptions{.statfs = FakeStatFs{&calls}});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(MountPoints(r.batch), (std::set<std::string>{"/", "/dev/shm"}));
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_size_bytes",
                      {{"mountpoint", "/"}, {"device", "/dev/vda"}, {"fstype", "ext4"}}),
            1e12);
}

TEST(StatvfsFilesystemCollectorTest, FallsBackToProcMounts) {
  std::vector<std::string> calls;
  StatvfsFilesystemCollector collector(FixturePaths("old_kernel_4x"),
                                       StatvfsFilesystemOptions{.statfs = FakeStatFs{&calls}});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(MountPoints(r.batch), (std::set<std::string>{"/", "/home", "/run"}));
  // "rootfs /" is hidden by the later "/dev/sda1 /".
  EXPECT_EQ(FindValue(r.batch, "vigil_host_filesystem_size_bytes",
                      {{"mountpoint", "/"}, {"device", "/dev/sda1"}}),
            1e12);
}

// The mount table is polled, not read, between changes: a child in its own mount namespace
// mounts and unmounts a tmpfs, and the next tick after each shows it (through POLLPRI on the
// kept /proc/<child>/mounts; the proc root's "1" points at the child).
TEST(StatvfsFilesystemCollectorTest, AMountOrUnmountShowsOnTheNextTick) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root (a mount namespace and a tmpfs mount)";
  }
  ScratchTree tree;
  const std::string mnt = tree.paths().proc_root + "/../mnt";
  std::filesystem::create_directories(mnt);
  int to_child[2];
  int to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only system calls here: the parent may have threads.
    char c = 0;
    const bool ready = unshare(CLONE_NEWNS) == 0 &&
                       mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    c = ready ? 'r' : 'x';
    (void)!write(to_parent[1], &c, 1);
    if (read(to_child[0], &c, 1) == 1 && c == 'm') {
      c = mount("vigiltest", mnt.c_str(), "tmpfs", 0, "size=1m") == 0 ? 'm' : 'x';
      (void)!write(to_parent[1], &c, 1);
    }
    if (read(to_child[0], &c, 1) == 1 && c == 'u') {
      c = umount(mnt.c_str()) == 0 ? 'u' : 'x';
      (void)!write(to_parent[1], &c, 1);
    }
    (void)!read(to_child[0], &c, 1);
    _exit(0);
  }
  auto ask = [&](char what) {
    char c = what;
    EXPECT_EQ(write(to_child[1], &c, 1), 1);
    EXPECT_EQ(read(to_parent[0], &c, 1), 1);
    return c;
  };
  char c = 0;
  ASSERT_EQ(read(to_parent[0], &c, 1), 1);
  if (c != 'r') {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    GTEST_SKIP() << "no private mount namespace here";
  }
  std::filesystem::create_directory_symlink("/proc/" + std::to_string(child),
                                            tree.paths().Proc("1"));
  std::vector<std::string> calls;
  StatvfsFilesystemCollector collector(tree.paths(),
                                       StatvfsFilesystemOptions{.statfs = FakeStatFs{&calls}});
  const std::string mount_point = std::filesystem::weakly_canonical(mnt).string();
  auto has_mount = [&] {
    auto r = CollectOnce(collector);
    EXPECT_TRUE(r.status.ok()) << r.status.ToString();
    return MountPoints(r.batch).contains(mount_point);
  };

  EXPECT_FALSE(has_mount());
  EXPECT_FALSE(has_mount());
  EXPECT_EQ(ask('m'), 'm');
  EXPECT_TRUE(has_mount());
  EXPECT_TRUE(has_mount());
  EXPECT_EQ(ask('u'), 'u');
  EXPECT_FALSE(has_mount());
  c = 'q';
  EXPECT_EQ(write(to_child[1], &c, 1), 1);
  waitpid(child, nullptr, 0);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) {
    close(fd);
  }
}

TEST(StatvfsFilesystemCollectorTest, RealStatvfsOnThisMachinesRoot) {
  StatvfsFilesystemCollector collector(FixturePaths("debian12_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::optional<double> size =
      FindValue(r.batch, "vigil_host_filesystem_size_bytes", {{"mountpoint", "/"}});
  ASSERT_TRUE(size.has_value());
  EXPECT_GT(*size, 0);
  EXPECT_LE(MustFind(r.batch, "vigil_host_filesystem_avail_bytes", {{"mountpoint", "/"}}), *size);
}

TEST(StatvfsFilesystemCollectorTest, DecodesOctalEscapes) {
  auto mounts = StatvfsFilesystemCollector::Parse("/dev/x /a\\040b\\011c\\134 ext4 rw 0 0\n");

  ASSERT_TRUE(mounts.ok());
  ASSERT_EQ(mounts->size(), 1u);
  EXPECT_EQ((*mounts)[0].mount_point, "/a b\tc\\");
  EXPECT_FALSE((*mounts)[0].read_only);
}

TEST(StatvfsFilesystemCollectorTest, TruncatedLineIsDataLoss) {
  auto mounts = StatvfsFilesystemCollector::Parse("/dev/sda1 / ext4 rw 0 0\n/dev/sdb1 /x\n");

  EXPECT_EQ(mounts.status().code(), StatusCode::kDataLoss);
}

TEST(StatvfsFilesystemCollectorTest, NoMountTableIsAbsent) {
  ScratchTree tree;
  StatvfsFilesystemCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

TEST(StatvfsFilesystemCollectorTest, BadRegexIsInvalidArgument) {
  StatvfsFilesystemCollector collector(FixturePaths("debian12_vm"),
                                       StatvfsFilesystemOptions{.fstype_exclude = "[z-a]"});

  EXPECT_EQ(CollectOnce(collector).status.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil
