// SPDX-License-Identifier: Apache-2.0
#include "profile/rolling_profiles.h"

#include <gtest/gtest.h>

#include "profile/folded_output.h"

namespace vigil {
namespace {

ProfileFrame Native(const std::string& function) {
  ProfileFrame frame;
  frame.function = function;
  frame.module = "app";
  return frame;
}

// A profile of `count` samples of the stack root -> ... -> leaf named by `names`.
Profile StackProfile(const std::vector<std::string>& names, uint64_t count, int pid,
                     int64_t start_ns) {
  Profile profile;
  std::vector<int> ids;
  for (const std::string& name : names) {
    ids.push_back(profile.Intern(Native(name)));
  }
  profile.Add(ids, count);
  profile.info().pids = {pid};
  profile.info().start_unix_ns = start_ns;
  profile.info().duration_ns = 1000;
  profile.info().lost_samples = 1;
  return profile;
}

ProfileWindow Window(int64_t start_ns, std::map<std::string, Profile> jobs) {
  ProfileWindow window;
  window.start_unix_ns = start_ns;
  window.end_unix_ns = start_ns + 1000;
  window.frequency_hz = 19;
  window.jobs = std::move(jobs);
  return window;
}

TEST(MergeProfileIntoTest, ReinternsFramesAndAddsEqualStacks) {
  Profile a = StackProfile({"main", "work", "hot"}, 3, 10, 5000);
  // Interned in another order: "hot" is frame 0 here, so ids differ between the two.
  Profile b;
  const int hot = b.Intern(Native("hot"));
  const int main_id = b.Intern(Native("main"));
  const int work = b.Intern(Native("work"));
  b.Add({main_id, work, hot}, 4);
  b.Add({main_id, work}, 2);
  b.info().pids = {11};
  b.info().start_unix_ns = 7000;
  b.info().duration_ns = 1000;

  Profile merged;
  MergeProfileInto(a, &merged);
  MergeProfileInto(b, &merged);

  EXPECT_EQ(merged.total_samples(), 9u);
  EXPECT_EQ(merged.frames().size(), 3u);
  EXPECT_EQ(WriteFolded(merged), "main;work 2\nmain;work;hot 7\n");
  EXPECT_EQ(merged.info().pids, (std::vector<int>{10, 11}));
  EXPECT_EQ(merged.info().start_unix_ns, 5000);
  EXPECT_EQ(merged.info().duration_ns, 3000);
  EXPECT_EQ(merged.info().lost_samples, 1u);
}

TEST(RollingProfilesTest, MergesWindowsPerJob) {
  RollingProfiles rolling(10);
  std::map<std::string, Profile> first;
  first.emplace("job-a", StackProfile({"main", "a_hot"}, 5, 1, 1000));
  first.emplace(kNoJob, StackProfile({"main", "idle"}, 2, 3, 1000));
  rolling.AddWindow(Window(1000, std::move(first)));
  std::map<std::string, Profile> second;
  second.emplace("job-a", StackProfile({"main", "a_hot"}, 4, 1, 2000));
  second.emplace("job-b", StackProfile({"main", "b_hot"}, 7, 2, 2000));
  rolling.AddWindow(Window(2000, std::move(second)));

  std::vector<RollingJobSummary> jobs = rolling.Jobs();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].job_id, "job-a");
  EXPECT_EQ(jobs[0].samples, 9u);
  EXPECT_EQ(jobs[0].windows, 2u);
  EXPECT_EQ(jobs[0].start_unix_ns, 1000);
  EXPECT_EQ(jobs[0].end_unix_ns, 3000);
  EXPECT_EQ(jobs[1].job_id, "job-b");
  EXPECT_EQ(jobs[1].samples, 7u);
  EXPECT_EQ(jobs[1].windows, 1u);
  EXPECT_EQ(jobs[2].job_id, "no-job");
  EXPECT_EQ(jobs[2].samples, 2u);

  std::optional<Profile> a = rolling.Merged("job-a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(WriteFolded(*a), "main;a_hot 9\n");
  EXPECT_EQ(a->info().lost_samples, 2u);
  std::optional<Profile> b = rolling.Merged("job-b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(WriteFolded(*b), "main;b_hot 7\n");
  EXPECT_FALSE(rolling.Merged("job-c").has_value());
}

TEST(RollingProfilesTest, DropsWindowsBeyondKeep) {
  RollingProfiles rolling(2);
  for (int i = 0; i < 3; ++i) {
    std::map<std::string, Profile> jobs;
    // Window i holds i + 1 samples of job-a; the first window alone holds job-old.
    jobs.emplace("job-a", StackProfile({"main", "hot"}, static_cast<uint64_t>(i + 1), 1, i * 1000));
    if (i == 0) {
      jobs.emplace("job-old", StackProfile({"main", "old"}, 5, 2, 0));
    }
    rolling.AddWindow(Window(i * 1000, std::move(jobs)));
  }

  EXPECT_EQ(rolling.windows(), 2u);
  std::vector<RollingJobSummary> jobs = rolling.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].job_id, "job-a");
  EXPECT_EQ(jobs[0].samples, 5u);  // 2 + 3: the first window's 1 expired.
  EXPECT_EQ(jobs[0].start_unix_ns, 1000);
  EXPECT_FALSE(rolling.Merged("job-old").has_value());
  EXPECT_EQ(WriteFolded(*rolling.Merged("job-a")), "main;hot 5\n");
  // The running totals keep what expired.
  EXPECT_EQ(rolling.SamplesTotal().at("job-a"), 6u);
  EXPECT_EQ(rolling.SamplesTotal().at("job-old"), 5u);
}

TEST(RollingProfilesTest, EmptyJobProfilesAreNotListed) {
  RollingProfiles rolling(3);
  std::map<std::string, Profile> jobs;
  jobs.emplace("job-quiet", Profile());
  rolling.AddWindow(Window(0, std::move(jobs)));

  EXPECT_TRUE(rolling.Jobs().empty());
  EXPECT_FALSE(rolling.Merged("job-quiet").has_value());
  EXPECT_EQ(rolling.windows(), 1u);
}

}  // namespace
}  // namespace vigil
