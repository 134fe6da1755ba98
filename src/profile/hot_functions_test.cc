// SPDX-License-Identifier: Apache-2.0
#include "profile/hot_functions.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(HotFunctionsTest, SelfIsLeafTotalCountsRecursionOnce) {
  Profile profile;
  auto id = [&](const char* name) {
    ProfileFrame f;
    f.function = name;
    f.module = "app";
    return profile.Intern(f);
  };
  const int main_id = id("main"), walk = id("walk"), leaf = id("leaf");
  profile.Add({main_id, walk, walk, leaf}, 6);
  profile.Add({main_id, walk}, 3);
  profile.Add({main_id}, 1);

  std::vector<HotFunction> rows = HotFunctions(profile, 10);

  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].label, "leaf");
  EXPECT_EQ(rows[0].self, 6u);
  EXPECT_EQ(rows[0].total, 6u);
  EXPECT_EQ(rows[1].label, "walk");
  EXPECT_EQ(rows[1].self, 3u);
  EXPECT_EQ(rows[1].total, 9u);
  EXPECT_EQ(rows[2].label, "main");
  EXPECT_EQ(rows[2].self, 1u);
  EXPECT_EQ(rows[2].total, 10u);
  EXPECT_EQ(HotFunctions(profile, 1).size(), 1u);
}

}  // namespace
}  // namespace vigil
