// SPDX-License-Identifier: Apache-2.0
#include "collectors/deadline_statfs.h"

#include <sys/statvfs.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/wait_for.h"

namespace vigil {
namespace {

using std::chrono::milliseconds;

// The answer is the inner function's, here statvfs(2) of a real directory checked against a
// direct call.
TEST(DeadlineStatfsTest, AnswersWhatStatvfsSays) {
  StatFsFunction statfs = DeadlineStatfs(
      [](const std::string& path) -> StatusOr<FsStats> {
        struct statvfs st {};
        if (statvfs(path.c_str(), &st) != 0) return UnavailableError("statvfs failed");
        return FsStats{.size_bytes = st.f_blocks * st.f_frsize, .inodes = st.f_files};
      },
      milliseconds(10000));
  struct statvfs direct {};
  ASSERT_EQ(statvfs("/", &direct), 0);
  StatusOr<FsStats> got = statfs("/");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->size_bytes, direct.f_blocks * direct.f_frsize);
  EXPECT_EQ(got->inodes, direct.f_files);
  EXPECT_FALSE(statfs("/no/such/mount/point").ok());
}

// Calls one after another reuse one worker thread instead of starting one each.
TEST(DeadlineStatfsTest, ReusesItsWorkerFromCallToCall) {
  std::mutex mu;
  std::set<std::thread::id> threads;
  StatFsFunction statfs = DeadlineStatfs(
      [&](const std::string&) -> StatusOr<FsStats> {
        std::lock_guard lock(mu);
        threads.insert(std::this_thread::get_id());
        return FsStats{.size_bytes = 1};
      },
      milliseconds(10000));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(statfs("/mnt/" + std::to_string(i % 3)).ok());
  }
  std::lock_guard lock(mu);
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

// A mount that blocks misses its deadline, then answers Unavailable at once while blocked; other
// mounts keep answering meanwhile, and once it returns it answers again.
TEST(DeadlineStatfsTest, ABlockedMountParksOneWorkerAndTheOthersGoOn) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
  };
  auto gate = std::make_shared<Gate>();
  auto blocked_calls = std::make_shared<std::atomic<int>>(0);
  StatFsFunction statfs = DeadlineStatfs(
      [gate, blocked_calls](const std::string& path) -> StatusOr<FsStats> {
        if (path == "/dead") {
          ++*blocked_calls;
          std::unique_lock lock(gate->mu);
          gate->cv.wait(lock, [&] { return gate->open; });
        }
        return FsStats{.size_bytes = path.size()};
      },
      milliseconds(50));
  ASSERT_TRUE(statfs("/a").ok());
  StatusOr<FsStats> dead = statfs("/dead");
  EXPECT_EQ(dead.status().code(), StatusCode::kDeadlineExceeded);
  StatusOr<FsStats> again = statfs("/dead");
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("still blocked"), std::string::npos);
  EXPECT_EQ(blocked_calls->load(), 1);  // No second thread went into the dead mount.
  StatusOr<FsStats> other = statfs("/bb");
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_EQ(other->size_bytes, 3u);
  {
    std::lock_guard lock(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  EXPECT_TRUE(WaitFor([&] { return statfs("/dead").ok(); }, 30, milliseconds(10)));
}

}  // namespace
}  // namespace vigil
