// SPDX-License-Identifier: Apache-2.0
#include "cli/reply.h"

#include <cmath>

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ReplyTest, MistypedFieldsFallBackInsteadOfThrowing) {
  const nlohmann::json obj = {{"s", 5}, {"n", "x"}, {"a", 1}, {"o", nullptr}};
  EXPECT_EQ(JsonString(obj, "s"), "5");
  EXPECT_EQ(JsonString(obj, "missing", "d"), "d");
  EXPECT_EQ(JsonString(obj, "o", "d"), "d");
  EXPECT_EQ(JsonNumber(obj, "n", 7), 7);
  EXPECT_TRUE(JsonArray(obj, "a").empty());
  EXPECT_TRUE(JsonObject(obj, "o").empty());
  EXPECT_EQ(JsonString(nlohmann::json::array(), "s", "d"), "d");
}

TEST(ReplyTest, ParsesSeriesSortedWithNullsAsNaN) {
  const nlohmann::json reply = nlohmann::json::parse(R"({"series":[
    {"name":"vigil_b","kind":"counter","unit":"seconds","labels":{"mode":"user"},
     "points":[[2000,5.5],[1000,4]]},
    {"name":"vigil_a","kind":"gauge","unit":"bytes","labels":{},"points":[[1000,null]]},
    {"kind":"gauge"}
  ]})");
  std::vector<SeriesView> series = ParseSeries(reply);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].Key(), "vigil_a");
  EXPECT_TRUE(std::isnan(series[0].last()));
  EXPECT_EQ(series[1].Key(), R"(vigil_b{mode="user"})");
  EXPECT_EQ(series[1].kind, "counter");
  ASSERT_EQ(series[1].points.size(), 2u);
  EXPECT_EQ(series[1].points[0].first, 1000);
  EXPECT_EQ(series[1].last(), 5.5);
}

}  // namespace
}  // namespace vigil
