// SPDX-License-Identifier: Apache-2.0
// Lints every collector in AllCollectors(): names unique and sorted, every family follows the
// naming rules of metrics/naming.h, and no family is declared by two collectors.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "collectors/all_collectors.h"
#include "metrics/naming.h"

namespace vigil {
namespace {

TEST(MetricNamesTest, EveryFamilyFollowsTheNamingRules) {
  for (const CollectorInfo* info : AllCollectors()) {
    ASSERT_NE(info, nullptr);
    for (const MetricDesc* desc : info->metrics) {
      Status s = CheckMetricDesc(*desc);

      EXPECT_TRUE(s.ok()) << info->name << ": " << s.message();
    }
  }
}

TEST(MetricNamesTest, CollectorNamesAreUniqueAndSorted) {
  std::string previous;
  for (const CollectorInfo* info : AllCollectors()) {
    const std::string name(info->name);

    EXPECT_LT(previous, name) << "all_collectors.cc must list collectors sorted and once each";
    EXPECT_NE(name.find('_'), std::string::npos) << name << ": names are <source>_<thing>";
    previous = name;
  }
}

TEST(MetricNamesTest, EveryCollectorHasHelpFactoryAndFamilies) {
  for (const CollectorInfo* info : AllCollectors()) {
    EXPECT_FALSE(info->help.empty()) << info->name;
    EXPECT_NE(info->create, nullptr) << info->name;
    EXPECT_FALSE(info->metrics.empty()) << info->name;
  }
}

TEST(MetricNamesTest, NoFamilyIsDeclaredByTwoCollectors) {
  std::set<std::string> seen;
  for (const CollectorInfo* info : AllCollectors()) {
    for (const MetricDesc* desc : info->metrics) {
      EXPECT_TRUE(seen.insert(std::string(desc->name)).second)
          << desc->name << " is declared twice (" << info->name << ")";
    }
  }
}

}  // namespace
}  // namespace vigil
