// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_promql_report.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using nlohmann::json;

const json* Row(const json& report, const std::string& key, int64_t bucket_s = -1) {
  for (const json& r : report["rows"]) {
    if (r["key"] == key && (bucket_s < 0 || r.value("bucket_start_s", int64_t{-1}) == bucket_s)) {
      return &r;
    }
  }
  return nullptr;
}

TEST(PromqlQueryTest, DimensionsMapToLabels) {
  EXPECT_EQ(*PromqlGroupLabel("job"), "job_id");
  EXPECT_EQ(*PromqlGroupLabel("framework"), "framework");
  EXPECT_EQ(*PromqlGroupLabel("gpu_model"), "gpu_model");
  EXPECT_EQ(PromqlGroupLabel("rule").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildPromqlQueries("team", 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(PromqlQueryTest, JobDimensionsSumIncreasesAndOneUnallocatedIdleSum) {
  auto q = BuildPromqlQueries("team", 3600);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 5u);
  EXPECT_EQ((*q)[0].column, PromqlColumn::kAllocatedS);
  EXPECT_EQ((*q)[0].expr, "sum by (team) (increase(vigil_gpu_allocated_seconds_total[3600s]))");
  EXPECT_EQ((*q)[1].expr, "sum by (team) (increase(vigil_gpu_busy_seconds_total[3600s]))");
  EXPECT_EQ((*q)[2].expr, "sum by (team) (increase(vigil_gpu_held_idle_seconds_total[3600s]))");
  EXPECT_EQ((*q)[3].expr, "sum by (team) (increase(vigil_job_gpu_energy_joules_total[3600s]))");
  EXPECT_EQ((*q)[4].column, PromqlColumn::kIdleS);
  EXPECT_EQ((*q)[4].expr,
            "sum (clamp_min(sum_over_time((group by (host, gpu_uuid, gpu_model) "
            "(vigil_gpu_up))[3600s:15s]) * 15 - on (host, gpu_uuid) group_left () "
            "(sum by (host, gpu_uuid) (increase(vigil_gpu_allocated_seconds_total[3600s])) or "
            "group by (host, gpu_uuid) (last_over_time(vigil_gpu_up[3600s])) * 0), 0))");
}

TEST(PromqlQueryTest, HostAndGpuModelUseDeviceEnergyAndGroupIdle) {
  auto host = BuildPromqlQueries("host", 86400);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ((*host)[3].expr, "sum by (host) (increase(vigil_gpu_energy_joules_total[86400s]))");
  EXPECT_EQ((*host)[4].expr.rfind("sum by (host) (clamp_min(", 0), 0u) << (*host)[4].expr;
  auto model = BuildPromqlQueries("gpu_model", 86400);
  ASSERT_TRUE(model.ok());
  // Job counters carry no GPU model: it comes from vigil_gpu_up on (host, gpu_uuid).
  EXPECT_EQ((*model)[0].expr,
            "sum by (gpu_model) (increase(vigil_gpu_allocated_seconds_total[86400s]) * on (host, "
            "gpu_uuid) group_left (gpu_model) group by (host, gpu_uuid, gpu_model) "
            "(last_over_time(vigil_gpu_up[86400s])))");
  EXPECT_EQ((*model)[3].expr,
            "sum by (gpu_model) (increase(vigil_gpu_energy_joules_total[86400s]))");
}

TEST(PromqlQueryTest, ByJobAddsClientMeansAndIdleResolutionScalesWithTheWindow) {
  auto q = BuildPromqlQueries("job", 604800);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 9u);
  EXPECT_EQ((*q)[0].expr, "sum by (job_id) (increase(vigil_gpu_allocated_seconds_total[604800s]))");
  EXPECT_EQ((*q)[5].expr, "avg by (job_id) (avg_over_time(vigil_job_mfu_ratio[604800s]))");
  EXPECT_EQ((*q)[6].column, PromqlColumn::kFlopsPerStep);
  EXPECT_EQ((*q)[7].column, PromqlColumn::kStepS);
  EXPECT_EQ((*q)[8].expr,
            "avg by (job_id) (avg_over_time(vigil_job_device_seconds_per_input_byte[604800s]))");
  EXPECT_NE((*q)[4].expr.find("[604800s:121s]) * 121"), std::string::npos) << (*q)[4].expr;
  EXPECT_EQ(PromqlIdleResolution(60), 15);
  EXPECT_EQ(PromqlIdleResolution(5000 * 20), 20);
}

TEST(PromqlParseTest, VectorAndMatrixReplies) {
  auto v = ParsePromqlReply(
      R"({"status":"success","data":{"resultType":"vector","result":[
          {"metric":{"team":"llm"},"value":[1700000000.5,"3600"]},
          {"metric":{},"value":[1700000000,"12.5"]},
          {"metric":{"team":"x"},"value":[1700000000,"NaN"]}]}})",
      "team");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->size(), 2u);  // NaN is left out.
  EXPECT_EQ((*v)[0].key, "llm");
  EXPECT_EQ((*v)[0].time_s, 1700000001);
  EXPECT_DOUBLE_EQ((*v)[0].value, 3600);
  EXPECT_EQ((*v)[1].key, "");
  auto m = ParsePromqlReply(
      R"({"status":"success","data":{"resultType":"matrix","result":[
          {"metric":{"job_id":"j1"},"values":[[100,"1"],[200,"2"]]}]}})",
      "job_id");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[1].time_s, 200);
  EXPECT_DOUBLE_EQ((*m)[1].value, 2);
}

TEST(PromqlParseTest, EngineErrorsAndMalformedRepliesAreErrors) {
  auto e = ParsePromqlReply(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 4"})", "team");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().ToString().find("parse error at char 4"), std::string::npos);
  EXPECT_FALSE(ParsePromqlReply("<html>", "team").ok());
  EXPECT_FALSE(
      ParsePromqlReply(R"({"status":"success","data":{"resultType":"string"}})", "t").ok());
  EXPECT_FALSE(ParsePromqlReply(R"({"status":"success","data":{"resultType":"vector",
      "result":[{"metric":{},"value":["x"]}]}})",
                                "t")
                   .ok());
}

TEST(PromqlAssembleTest, RowsMatchTheFleetShape) {
  PromqlReportRequest r;
  r.by = "team";
  r.since_s = 1700000000;
  r.until_s = 1700003600;
  r.price_per_gpu_hour = 2;
  const json report =
      AssemblePromqlReport(r, {{PromqlColumn::kAllocatedS, {{"a", 0, 3600}, {"b", 0, 1800}}},
                               {PromqlColumn::kBusyS, {{"a", 0, 1800}}},
                               {PromqlColumn::kHeldIdleS, {{"b", 0, 1800}}},
                               {PromqlColumn::kEnergyJ, {{"a", 0, 7.2e6}}},
                               {PromqlColumn::kIdleS, {{"", 0, 1800}}}});
  ASSERT_EQ(report["rows"].size(), 3u) << report.dump(2);
  EXPECT_EQ(report["rows"][0]["key"], "a");  // Largest first.
  const json* a = Row(report, "a");
  EXPECT_DOUBLE_EQ((*a)["gpu_hours"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ((*a)["busy_gpu_hours"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ((*a)["idle_gpu_hours"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ((*a)["energy_joules"].get<double>(), 7.2e6);
  EXPECT_DOUBLE_EQ((*a)["cost"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ((*Row(report, "b"))["held_idle_gpu_hours"].get<double>(), 0.5);
  const json* idle = Row(report, "(unallocated)");
  ASSERT_TRUE(idle);
  EXPECT_DOUBLE_EQ((*idle)["idle_gpu_hours"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ((*idle)["allocated_gpu_hours"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(report["totals"]["gpu_hours"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(report["totals"]["allocated_gpu_hours"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(report["totals"]["idle_gpu_hours"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(report["totals"]["cost"].get<double>(), 4.0);
  EXPECT_EQ(report["since"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(report["source"], "prometheus");
  EXPECT_FALSE(report["notes"].empty());
}

TEST(PromqlAssembleTest, HostRowsAddIdleAndJobRowsCarryClientMeans) {
  PromqlReportRequest r;
  r.by = "host";
  r.since_s = 0;
  r.until_s = 7200;
  const json hosts =
      AssemblePromqlReport(r, {{PromqlColumn::kAllocatedS, {{"n1", 0, 3600}}},
                               {PromqlColumn::kIdleS, {{"n1", 0, 3600}, {"n2", 0, 7200}}}});
  EXPECT_DOUBLE_EQ((*Row(hosts, "n1"))["gpu_hours"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ((*Row(hosts, "n1"))["idle_gpu_hours"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ((*Row(hosts, "n2"))["gpu_hours"].get<double>(), 2.0);
  EXPECT_EQ(Row(hosts, "(unallocated)"), nullptr);

  r.by = "job";
  const json jobs =
      AssemblePromqlReport(r, {{PromqlColumn::kAllocatedS, {{"j1", 0, 3600}, {"j2", 0, 3600}}},
                               {PromqlColumn::kMfu, {{"j1", 0, 0.4}, {"ghost", 0, 0.9}}},
                               {PromqlColumn::kFlopsPerStep, {{"j1", 0, 2e12}}},
                               {PromqlColumn::kStepS, {{"j1", 0, 0.5}}},
                               {PromqlColumn::kDeviceSecondsPerInputByte, {{"j1", 0, 3e-9}}}});
  EXPECT_DOUBLE_EQ((*Row(jobs, "j1"))["mfu_ratio"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ((*Row(jobs, "j1"))["device_seconds_per_input_byte"].get<double>(), 3e-9);
  EXPECT_TRUE((*Row(jobs, "j2"))["device_seconds_per_input_byte"].is_null());
  EXPECT_DOUBLE_EQ((*Row(jobs, "j1"))["model_flops_per_second"].get<double>(), 4e12);
  EXPECT_TRUE((*Row(jobs, "j2"))["mfu_ratio"].is_null());
  EXPECT_EQ(Row(jobs, "ghost"), nullptr);  // Only jobs that held GPUs are rows.
}

TEST(PromqlRunTest, InstantQueriesAtUntilAndRangeQueriesPerBucket) {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> calls;
  PromqlFetch fetch =
      [&](const std::string& path,
          const std::vector<std::pair<std::string, std::string>>& params) -> StatusOr<std::string> {
    calls.emplace_back(path, std::map<std::string, std::string>(params.begin(), params.end()));
    const std::string& q = calls.back().second["query"];
    if (path == "/api/v1/query") {
      const std::string v =
          q.rfind("sum by (team) (increase(vigil_gpu_allocated", 0) == 0 ? "7200" : "0";
      return R"({"status":"success","data":{"resultType":"vector","result":[)"
             R"({"metric":{"team":"t"},"value":[100,")" +
             v + R"("]}]}})";
    }
    return std::string(R"({"status":"success","data":{"resultType":"matrix","result":[)"
                       R"({"metric":{"team":"t"},"values":[[7200,"3600"],[10800,"1800"]]}]}})");
  };
  PromqlReportRequest r;
  r.since_s = 3600 * 1 + 5;
  r.until_s = 3600 * 3 - 5;
  auto report = RunPromqlReport(r, fetch);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[0].first, "/api/v1/query");
  EXPECT_EQ(calls[0].second["time"], "10795");
  EXPECT_NE(calls[0].second["query"].find("[7190s]"), std::string::npos);
  EXPECT_DOUBLE_EQ((*Row(*report, "t"))["allocated_gpu_hours"].get<double>(), 2.0);
  EXPECT_EQ((*report)["queries"].size(), 5u);

  calls.clear();
  r.bucket_s = 3600;
  report = RunPromqlReport(r, fetch);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[0].first, "/api/v1/query_range");
  EXPECT_EQ(calls[0].second["start"], "7200");  // End of the bucket starting at 3600.
  EXPECT_EQ(calls[0].second["end"], "10800");
  EXPECT_EQ(calls[0].second["step"], "3600");
  EXPECT_NE(calls[0].second["query"].find("[3600s]"), std::string::npos);
  EXPECT_DOUBLE_EQ((*Row(*report, "t", 3600))["allocated_gpu_hours"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ((*Row(*report, "t", 7200))["allocated_gpu_hours"].get<double>(), 0.5);
  EXPECT_EQ((*Row(*report, "t", 7200))["bucket_start"], "1970-01-01T02:00:00.000Z");
}

TEST(PromqlRunTest, BadWindowsAndEngineFailuresAreErrors) {
  int calls = 0;
  PromqlFetch fail =
      [&](const std::string&,
          const std::vector<std::pair<std::string, std::string>>&) -> StatusOr<std::string> {
    ++calls;
    return UnavailableError("connection refused");
  };
  PromqlReportRequest r;
  r.since_s = 100;
  r.until_s = 100;
  EXPECT_EQ(RunPromqlReport(r, fail).status().code(), StatusCode::kInvalidArgument);
  r.until_s = 200;
  r.bucket_s = 5;
  EXPECT_EQ(RunPromqlReport(r, fail).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 0);
  r.bucket_s = 0;
  EXPECT_EQ(RunPromqlReport(r, fail).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace vigil
