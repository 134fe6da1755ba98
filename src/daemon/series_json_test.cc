// SPDX-License-Identifier: Apache-2.0
#include "daemon/series_json.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace vigil::daemon {
namespace {

constexpr MetricDesc kCpu{"vigil_host_cpu_seconds_total", "CPU time by mode.", MetricKind::kCounter,
                          "seconds"};

TEST(SeriesJsonTest, EncodesTheDocumentedShape) {
  SeriesData s;
  s.desc = &kCpu;
  s.labels = {{"cpu", "0"}, {"mode", "idle"}};
  s.points = {{1000, 1.5}, {2000, std::numeric_limits<double>::quiet_NaN()}};
  nlohmann::json j = SeriesListToJson({s});
  ASSERT_EQ(j["series"].size(), 1u);
  const auto& e = j["series"][0];
  EXPECT_EQ(e["name"], "vigil_host_cpu_seconds_total");
  EXPECT_EQ(e["kind"], "counter");
  EXPECT_EQ(e["unit"], "seconds");
  EXPECT_EQ(e["help"], "CPU time by mode.");
  EXPECT_EQ(e["labels"], (nlohmann::json{{"cpu", "0"}, {"mode", "idle"}}));
  EXPECT_EQ(e["points"][0], (nlohmann::json::array({1000, 1.5})));
  EXPECT_TRUE(e["points"][1][1].is_null());
}

TEST(SeriesJsonTest, QueriesAnswerFromTheStore) {
  SeriesStore store;
  MetricBatch batch;
  batch.time_ns = 1'000'000'000'000;
  MetricWriter w(&batch);
  w.Add(kCpu, 3, {{"cpu", "0"}, {"mode", "idle"}});
  w.Add(kCpu, 4, {{"cpu", "1"}, {"mode", "idle"}});
  store.Append(batch);

  auto latest = QueryLatest(store, "vigil_host_cpu_seconds_total{cpu=\"1\"}", 0);
  ASSERT_TRUE(latest.ok()) << latest.status().message();
  ASSERT_EQ((*latest)["series"].size(), 1u);
  EXPECT_EQ((*latest)["series"][0]["points"][0][1], 4.0);

  auto range = QueryRange(store, "", batch.time_ns - 1, batch.time_ns + 1, 0);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ((*range)["series"].size(), 2u);

  EXPECT_EQ(QueryLatest(store, "bad{", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(QueryRange(store, "", 10, 5, 0).ok());
}

}  // namespace
}  // namespace vigil::daemon
