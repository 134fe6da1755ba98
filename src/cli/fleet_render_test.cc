// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_render.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using nlohmann::json;

json Reply(const std::string& by) {
  json row{{"key", "j,1"},
           {"gpu_hours", 0.5},
           {"allocated_gpu_hours", 0.5},
           {"busy_gpu_hours", 0.25},
           {"held_idle_gpu_hours", 0},
           {"idle_gpu_hours", 0},
           {"energy_joules", 90000},
           {"cost", 1.25}};
  if (by == "job") {
    row["mfu_ratio"] = 0.415;
    row["model_flops_per_second"] = 2.5e14;
    row["step_seconds"] = 0.5;
    row["device_seconds_per_input_byte"] = 2.5e-9;
  }
  return json{
      {"by", by},     {"since", "S"}, {"until", "U"}, {"bucket_s", 0}, {"rows", json::array({row})},
      {"totals", row}};
}

TEST(FleetRenderTest, CsvKeepsTheFleetColumnsAndAddsClientMeansForJobs) {
  EXPECT_EQ(RenderAttributionCsv(Reply("team")),
            "team,gpu_hours,allocated_gpu_hours,busy_gpu_hours,held_idle_gpu_hours,"
            "idle_gpu_hours,energy_joules,cost\n\"j,1\",0.5,0.5,0.25,0,0,90000,1.25\n");
  json jobs = Reply("job");
  jobs["rows"].push_back(json{{"key", "j2"}, {"gpu_hours", 1}, {"mfu_ratio", nullptr}});
  EXPECT_EQ(RenderAttributionCsv(jobs),
            "job,gpu_hours,allocated_gpu_hours,busy_gpu_hours,held_idle_gpu_hours,"
            "idle_gpu_hours,energy_joules,cost,mfu_ratio,model_flops_per_second,step_seconds,"
            "device_seconds_per_input_byte\n"
            "\"j,1\",0.5,0.5,0.25,0,0,90000,1.25,0.415,250000000000000,0.5,2.5e-09\n"
            "j2,1,0,0,0,0,0,0,,,,\n");
}

TEST(FleetRenderTest, TableShowsMfuColumnsOnlyForJobsAndPrintsNotes) {
  const std::string team = RenderAttributionTable(Reply("team"));
  EXPECT_EQ(team.find("MFU"), std::string::npos) << team;
  EXPECT_NE(team.find("TEAM"), std::string::npos);
  json jobs = Reply("job");
  jobs["source"] = "prometheus";
  jobs["notes"] = json::array({"idle is approximate"});
  const std::string t = RenderAttributionTable(jobs);
  EXPECT_NE(t.find("GPU-hours by job from S to U (prometheus)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("MFU"), std::string::npos) << t;
  EXPECT_NE(t.find("41.5%"), std::string::npos) << t;
  EXPECT_NE(t.find("250.00"), std::string::npos) << t;
  EXPECT_NE(t.find("DEV-S/GB"), std::string::npos) << t;
  EXPECT_NE(t.find(" 2.5\n"), std::string::npos) << t;  // 2.5e-9 s per byte: 2.5 s per GB.
  EXPECT_NE(t.find("note: idle is approximate\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("past the ledger's retention"), std::string::npos) << t;
}

TEST(FleetRenderTest, TableSaysWhichEdgesWereCountedToTheWholeHour) {
  json team = Reply("team");
  team["asked_since"] = "A";
  team["asked_until"] = "B";
  team["whole_hour_edges"] = json::array({"since"});
  EXPECT_NE(RenderAttributionTable(team).find(
                "note: the minute rows of this window's since edge are past the ledger's "
                "retention: counted to the whole hour (asked A to B)\n"),
            std::string::npos)
      << RenderAttributionTable(team);
}

TEST(FleetRenderTest, JobsListAndOneJob) {
  json job{{"job_id", "4242"},
           {"user", "alice"},
           {"team", "llm"},
           {"model", "llama"},
           {"framework", "jax"},
           {"gpus", 8},
           {"gpu_hours", 16.0},
           {"busy_gpu_hours", 12.0},
           {"held_idle_gpu_hours", 1.0},
           {"mfu_ratio", 0.38},
           {"step_seconds", 1.25},
           {"model_flops_per_second", nullptr},
           {"device_seconds_per_input_byte", 4e-10}};
  const std::string list = RenderJobsTable(json{{"since", "S"}, {"until", "U"}, {"jobs", {job}}});
  EXPECT_NE(list.find("FRAMEWORK"), std::string::npos) << list;
  EXPECT_NE(list.find("38.0%"), std::string::npos) << list;
  EXPECT_NE(list.find("1.250"), std::string::npos) << list;
  const std::string one = RenderJob(job);
  EXPECT_NE(one.find("MFU              38.0%"), std::string::npos) << one;
  EXPECT_NE(one.find("model TFLOP/s    -"), std::string::npos) << one;
  EXPECT_NE(one.find("device-s per GB  0.4\n"), std::string::npos) << one;
  EXPECT_NE(list.find("0.4"), std::string::npos) << list;
}

// An empty list says why: no host reports at all, or hosts report but ran no job in the window.
TEST(FleetRenderTest, EmptyListsSayWhy) {
  const json none{{"since", "S"}, {"until", "U"}, {"jobs", json::array()}};
  const json no_hosts{{"hosts", json::array()}};
  const json one_host{{"hosts", json::array({json{{"host", "gpu01"}, {"gpu_count", 8}}})}};
  EXPECT_EQ(RenderJobsTable(none, no_hosts),
            "No jobs from S to U: no host has reported to this vigil-fleet yet: run vigild with "
            "--fleet-url URL (fleet_url in its config file) on each GPU host, then check `vigil "
            "status` there for the fleet sink.\n");
  const std::string quiet = RenderJobsTable(none, one_host);
  EXPECT_EQ(quiet.rfind("No jobs from S to U: 1 host(s) report, but none ran a GPU process with a "
                        "job id in this window",
                        0),
            0u)
      << quiet;
  EXPECT_EQ(RenderJobsTable(none), "No jobs from S to U.\n");  // Hosts unknown: no guess.
  EXPECT_EQ(RenderHostsTable(no_hosts).rfind("No hosts: no host has reported", 0), 0u);
  const std::string hosts = RenderHostsTable(one_host);
  EXPECT_NE(hosts.find("gpu01"), std::string::npos) << hosts;
  EXPECT_NE(hosts.find("HEALTH"), std::string::npos) << hosts;
  const std::string report = RenderAttributionTable(
      json{{"by", "team"}, {"since", "S"}, {"until", "U"}, {"rows", json::array()}});
  EXPECT_NE(report.find("note: no GPU-hours in this window"), std::string::npos) << report;
}

}  // namespace
}  // namespace vigil
