// SPDX-License-Identifier: Apache-2.0
#include "profile/json_output.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(JsonOutputTest, CallTreeMergesPathsAndSumsCounts) {
  Profile profile;
  auto id = [&](const char* name) {
    ProfileFrame f;
    f.function = name;
    return profile.Intern(f);
  };
  const int m = id("main"), a = id("a"), b = id("b");
  profile.Add({m, a}, 3);
  profile.Add({m, a, b}, 2);
  profile.Add({m, b}, 1);

  nlohmann::json tree = CallTreeJson(profile);
  nlohmann::json flat = ProfileToJson(profile);

  EXPECT_EQ(tree["total"], 6);
  const nlohmann::json& root = tree["root"];
  EXPECT_EQ(root["v"], 6);
  ASSERT_EQ(root["c"].size(), 1u);
  const nlohmann::json& main_node = root["c"][0];
  EXPECT_EQ(tree["names"][main_node["n"].get<int>()], "main");
  EXPECT_EQ(main_node["v"], 6);
  ASSERT_EQ(main_node["c"].size(), 2u);
  EXPECT_EQ(tree["names"][main_node["c"][0]["n"].get<int>()], "a");
  EXPECT_EQ(main_node["c"][0]["v"], 5);
  EXPECT_EQ(main_node["c"][0]["c"][0]["v"], 2);
  EXPECT_EQ(main_node["c"][1]["v"], 1);
  EXPECT_EQ(flat["total_samples"], 6);
  EXPECT_EQ(flat["stacks"].size(), 3u);
  EXPECT_EQ(flat["frames"][1]["name"], "a");
}

}  // namespace
}  // namespace vigil
