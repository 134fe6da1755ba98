// SPDX-License-Identifier: Apache-2.0
#include "sinks/staleness_tracker.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

RwLabels Series(const std::string& job) { return {{"__name__", "m"}, {"job_id", job}}; }

void See(StalenessTracker* t, const std::string& source, const std::vector<std::string>& jobs,
         std::vector<RwLabels>* stale) {
  t->Begin(source);
  for (const std::string& job : jobs) {
    t->Saw(SeriesKey(Series(job)), Series(job));
  }
  *stale = t->End();
}

TEST(StalenessTrackerTest, SeriesMissingFromNextBatchIsStaleOnce) {
  StalenessTracker t;
  std::vector<RwLabels> stale;
  See(&t, "gpu", {"a", "b"}, &stale);
  EXPECT_TRUE(stale.empty());
  See(&t, "gpu", {"a"}, &stale);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0], Series("b"));
  See(&t, "gpu", {"a"}, &stale);
  EXPECT_TRUE(stale.empty());
  EXPECT_EQ(t.tracked_series(), 1u);
}

TEST(StalenessTrackerTest, SourcesAreIndependent) {
  StalenessTracker t;
  std::vector<RwLabels> stale;
  See(&t, "gpu", {"a"}, &stale);
  See(&t, "cpu", {"x"}, &stale);
  EXPECT_TRUE(stale.empty());  // "cpu" never had "a".
  See(&t, "gpu", {"a"}, &stale);
  EXPECT_TRUE(stale.empty());  // "x" belongs to "cpu".
  See(&t, "cpu", {}, &stale);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0], Series("x"));
  EXPECT_EQ(t.tracked_series(), 1u);
}

TEST(StalenessTrackerTest, SeriesThatComesBackIsTrackedAgain) {
  StalenessTracker t;
  std::vector<RwLabels> stale;
  See(&t, "s", {"a"}, &stale);
  See(&t, "s", {}, &stale);
  EXPECT_EQ(stale.size(), 1u);
  See(&t, "s", {"a"}, &stale);
  EXPECT_TRUE(stale.empty());
  See(&t, "s", {}, &stale);
  EXPECT_EQ(stale.size(), 1u);
}

TEST(StalenessTrackerTest, RepeatedSeriesInOneBatchCountsOnce) {
  StalenessTracker t;
  std::vector<RwLabels> stale;
  See(&t, "s", {"a", "a"}, &stale);
  See(&t, "s", {"a", "a"}, &stale);
  EXPECT_TRUE(stale.empty());
  EXPECT_EQ(t.tracked_series(), 1u);
}

}  // namespace
}  // namespace vigil
