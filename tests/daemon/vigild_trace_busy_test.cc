// SPDX-License-Identifier: Apache-2.0
// `vigil trace` details through the real vigild, with the spec-written Kineto client polling as
// Kineto does and writing its trace file when its trace window has passed: a process busy with
// another trace is named with that trace and when it should end, and --wait --retry-busy waits
// for it and then takes the new trace; a Dynolog request whose log path is moved says where the
// files go, in its reply and in the daemon's log; --wait that matched nothing fails and says
// against what; --slurm-job finds the job's nodes and its id with scontrol.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "ipc/trace_config.h"
#include "kineto_spec_client.h"
#include "rpc/rpc_client.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

constexpr int64_t kJobId = 4242;
constexpr int32_t kActivities = 2;

std::string ConfigValue(const std::string& config, const std::string& key) {
  const size_t at = config.find(key + "=");
  if (at == std::string::npos) {
    return "";
  }
  const size_t from = at + key.size() + 1;
  return config.substr(from, config.find('\n', from) - from);
}

// One Kineto process of job kJobId: polls every 50 ms, takes configs, and writes the trace file
// once the config's window (start time, or delivery, plus duration) has passed, as Kineto does.
class KinetoProcess {
 public:
  explicit KinetoProcess(const VigildProcess& daemon)
      : client_("vigil-kineto-busy-" + std::to_string(getpid()), daemon.ipc_name()),
        pids_(testing_util::OwnAncestorPids()) {}
  ~KinetoProcess() { Stop(); }
  bool Start() {
    if (!client_.ok() || !client_.Poll(kActivities, kJobId, pids_).has_value()) {
      return false;
    }
    thread_ = std::thread([this] { Run(); });
    return true;
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  std::vector<std::string> TraceIds() {
    std::lock_guard lock(mu_);
    return trace_ids_;
  }

 private:
  void Run() {
    std::string log;
    int64_t write_at_ms = 0;
    while (!stop_) {
      auto config = client_.Poll(kActivities, kJobId, pids_);
      const int64_t now_ms = UnixNanos() / kNanosPerMilli;
      if (config && !ConfigValue(*config, "ACTIVITIES_LOG_FILE").empty()) {
        log = ConfigValue(*config, "ACTIVITIES_LOG_FILE");
        const int64_t start = ParseInt64(ConfigValue(*config, "PROFILE_START_TIME")).value_or(0);
        const int64_t duration =
            ParseInt64(ConfigValue(*config, "ACTIVITIES_DURATION_MSECS")).value_or(500);
        write_at_ms = (start > 0 ? start : now_ms) + duration;
        std::lock_guard lock(mu_);
        trace_ids_.push_back(ConfigValue(*config, "REQUEST_TRACE_ID"));
      }
      if (!log.empty() && now_ms >= write_at_ms) {
        (void)WriteFileAtomic(KinetoTraceFileForPid(log, static_cast<int32_t>(getpid())),
                              R"({"traceEvents": []})");
        log.clear();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  testing_util::KinetoSpecClient client_;
  std::vector<int32_t> pids_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> trace_ids_;
};

StatusOr<nlohmann::json> Rpc(const VigildProcess& daemon, const nlohmann::json& request) {
  VIGIL_ASSIGN_OR_RETURN(RpcClient client,
                         RpcClient::Connect(daemon.rpc_target(), 10 * kNanosPerSecond));
  return client.Call(request, 10 * kNanosPerSecond);
}

TEST(VigildTraceBusyTest, BusyProcessIsNamedAndRetryBusyTracesItOnceItIsFree) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  KinetoProcess kineto(daemon);
  ASSERT_TRUE(kineto.Start()) << daemon.Log();
  // Another user of the daemon holds the process: a trace starting in 6 s, lasting 1 s.
  const int64_t start_ms = UnixNanos() / kNanosPerMilli + 6000;
  auto held = Rpc(daemon, {{"fn", "vigilTraceStart"},
                           {"job_id", std::to_string(kJobId)},
                           {"profile_start_time", start_ms},
                           {"duration_ms", 1000},
                           {"reason", "nightly"}});
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  ASSERT_EQ((*held)["triggered"], 1) << held->dump();
  const std::string holder = (*held)["trace_id"];
  const int64_t expected_end_ms = start_ms + 1000;

  std::string out;
  ASSERT_EQ(RunVigilCli(
                "trace --job-id 4242 --duration-ms 100 --json --host " + daemon.rpc_target(), &out),
            0)
      << out;
  auto json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(json.is_array() && json.size() == 1u) << out;
  ASSERT_EQ(json[0]["busy_processes"].size(), 1u) << out;
  const nlohmann::json& busy = json[0]["busy_processes"][0];
  EXPECT_EQ(busy["pid"], getpid());
  EXPECT_EQ(busy["held_by"], holder);
  EXPECT_EQ(busy["origin"], "vigilTraceStart");
  EXPECT_NE(busy["requested_by"].get<std::string>().find("uid " + std::to_string(geteuid())),
            std::string::npos)
      << out;
  EXPECT_EQ(busy["expected_end_unix_ms"], expected_end_ms);
  EXPECT_EQ(busy["expected_end"], FormatTimestamp(expected_end_ms * kNanosPerMilli));

  ASSERT_EQ(
      RunVigilCli("trace --job-id 4242 --duration-ms 100 --host " + daemon.rpc_target(), &out), 0);
  EXPECT_NE(out.find("busy with trace " + holder), std::string::npos) << out;
  EXPECT_NE(out.find("\"nightly\""), std::string::npos) << out;
  EXPECT_NE(out.find("should end at " + FormatTimestamp(expected_end_ms * kNanosPerMilli)),
            std::string::npos)
      << out;

  // --retry-busy waits for the holder to finish, then takes the new trace.
  const int status = RunVigilCli(
      "trace --job-id 4242 --duration-ms 100 --wait --retry-busy --wait-timeout 90s "
      "--host " +
          daemon.rpc_target(),
      &out);
  kineto.Stop();
  ASSERT_EQ(status, 0) << out << daemon.Log();
  EXPECT_NE(out.find("waiting: pid " + std::to_string(getpid()) + " busy with trace " + holder),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("pid " + std::to_string(getpid()) + " is free; traced as tr-"),
            std::string::npos)
      << out;
  // The process took exactly two configs: the holder's, then the retaken trace's.
  const std::vector<std::string> taken = kineto.TraceIds();
  ASSERT_EQ(taken.size(), 2u) << out;
  EXPECT_EQ(taken[0], holder);
  EXPECT_NE(out.find(taken[1]), std::string::npos) << out;
  EXPECT_NE(out.find("written"), std::string::npos) << out;
  auto first = Rpc(daemon, {{"fn", "vigilTraceStatus"}, {"trace_id", holder}});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["processes"][0]["state"], "written") << first->dump();
}

TEST(VigildTraceBusyTest, DynologRequestWithAMovedLogPathNamesTheRealFiles) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-mv-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, testing_util::OwnAncestorPids()).has_value());
  auto reply = Rpc(daemon, {{"fn", "setKinetOnDemandRequest"},
                            {"config",
                             "ACTIVITIES_LOG_FILE=/tmp/gpu_trace.json\nPROFILE_START_TIME=0\n"
                             "ACTIVITIES_DURATION_MSECS=500"},
                            {"job_id", kJobId},
                            {"pids", {0}},
                            {"process_limit", 3}});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ((*reply)["activityProfilersTriggered"], nlohmann::json::array({getpid()}));
  const nlohmann::json& moved = (*reply)["vigilRewrittenLogFiles"];
  ASSERT_TRUE(moved.is_object()) << reply->dump();
  const std::string id = moved["trace_id"];
  const std::string dir = daemon.dir() + "/traces/" + id;
  EXPECT_EQ(moved["requested"], "/tmp/gpu_trace.json");
  EXPECT_EQ(moved["log_file"], dir + "/gpu_trace.json");
  EXPECT_EQ(moved["files"],
            nlohmann::json::array(
                {{{"pid", getpid()},
                  {"path", dir + "/gpu_trace_" + std::to_string(getpid()) + ".json"}}}));
  // One line in the daemon's log for the rewrite.
  const std::string line = "trace log file rewritten: trace_id=" + id;
  ASSERT_TRUE(WaitFor([&] { return daemon.Log().find(line) != std::string::npos; }, 30))
      << daemon.Log();
  const std::string log = daemon.Log();
  const size_t at = log.find(line);
  EXPECT_EQ(log.find(line, at + 1), std::string::npos) << log;
  const std::string logged = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(logged.find("requested=/tmp/gpu_trace.json"), std::string::npos) << logged;
  EXPECT_NE(logged.find("written_to=" + dir + "/gpu_trace.json"), std::string::npos) << logged;
}

TEST(VigildTraceBusyTest, WaitThatMatchedNothingFailsAndSaysWhatItMatchedAgainst) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-nm2-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, testing_util::OwnAncestorPids()).has_value());
  std::string out;
  EXPECT_EQ(RunVigilCli("trace --job-id 999 --pids 12 --wait --wait-timeout 30s --host " +
                            daemon.rpc_target(),
                        &out),
            1);
  EXPECT_NE(out.find("no process matched job id 999, pids 12, on 1 host"), std::string::npos)
      << out;
  EXPECT_NE(out.find("none has job id 999"), std::string::npos) << out;
  // Without --wait it is not a failure, unless asked for as with `dyno gputrace`.
  EXPECT_EQ(RunVigilCli("trace --job-id 999 --host " + daemon.rpc_target(), &out), 0) << out;
  EXPECT_EQ(
      RunVigilCli("trace --job-id 999 --fail-on-no-process --host " + daemon.rpc_target(), &out), 1)
      << out;
  EXPECT_NE(out.find("no process matched job id 999, any pid, on 1 host"), std::string::npos)
      << out;
  // --retry-busy only makes sense while waiting.
  EXPECT_EQ(RunVigilCli("trace --retry-busy --host " + daemon.rpc_target(), &out), 2) << out;
}

// A fake `scontrol` first on PATH answers `show job -o JOB` as SLURM does, for job 4242 and an
// array task 4241_2 whose own job id is 4242, naming this test's daemon as the job's node.
TEST(VigildTraceBusyTest, SlurmJobTracesThatJobsProcessesOnItsNodes) {
  VigildProcess daemon;
  ASSERT_TRUE(daemon.Spawn({}));
  ASSERT_TRUE(daemon.WaitHealthy()) << daemon.Log();
  testing_util::KinetoSpecClient kineto("vigil-kineto-slurm-" + std::to_string(getpid()),
                                        daemon.ipc_name());
  ASSERT_TRUE(kineto.Poll(kActivities, kJobId, testing_util::OwnAncestorPids()).has_value());
  const std::string bin = daemon.dir() + "/bin";
  ASSERT_EQ(mkdir(bin.c_str(), 0755), 0);
  const std::string node = daemon.rpc_target();
  ASSERT_TRUE(WriteFileAtomic(bin + "/scontrol",
                              "#!/bin/sh\n"
                              "[ \"$1 $2 $3\" = 'show job -o' ] || exit 2\n"
                              "case \"$4\" in\n"
                              "4242) echo 'JobId=4242 JobName=train UserId=alice(1001) "
                              "JobState=RUNNING NodeList=" +
                                  node +
                                  " BatchHost=x' ;;\n"
                                  "4241_2) echo 'JobId=4242 ArrayJobId=4241 ArrayTaskId=2 "
                                  "JobState=RUNNING NodeList=" +
                                  node +
                                  "' ;;\n"
                                  "5151) echo 'JobId=5151 JobState=RUNNING NodeList=" +
                                  node +
                                  "' ;;\n"
                                  "*) echo \"slurm_load_jobs error: Invalid job id specified\" "
                                  ">&2; exit 1 ;;\n"
                                  "esac\n")
                  .ok());
  ASSERT_EQ(chmod((bin + "/scontrol").c_str(), 0755), 0);
  const std::string old_path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
  setenv("PATH", (bin + ":" + old_path).c_str(), 1);
  std::string job, task, other, unknown;
  const int rc_job = RunVigilCli("trace --slurm-job 4242 --json", &job);
  const int rc_task = RunVigilCli("trace --slurm-job 4241_2 --json", &task);
  const int rc_other = RunVigilCli("trace --slurm-job 5151 --wait", &other);
  const int rc_unknown = RunVigilCli("trace --slurm-job 777", &unknown);
  setenv("PATH", old_path.c_str(), 1);

  for (const auto& [rc, text] : {std::pair{rc_job, job}, std::pair{rc_task, task}}) {
    ASSERT_EQ(rc, 0) << text;
    auto json = nlohmann::json::parse(text, nullptr, false);
    ASSERT_TRUE(json.is_array() && json.size() == 1u) << text;
    EXPECT_EQ(json[0]["host"], node) << text;
    EXPECT_EQ(json[0]["matched"], 1) << text;
  }
  auto first = nlohmann::json::parse(job, nullptr, false);
  auto session = Rpc(daemon, {{"fn", "vigilTraceStatus"}, {"trace_id", first[0]["trace_id"]}});
  ASSERT_TRUE(session.ok());
  EXPECT_EQ((*session)["job_id"], "4242");  // The daemon matched the SLURM job's id.
  // Another job on the same node matches nothing there, and says so.
  EXPECT_EQ(rc_other, 1) << other;
  EXPECT_NE(other.find("no process matched job id 5151"), std::string::npos) << other;
  EXPECT_NE(other.find("none has job id 5151"), std::string::npos) << other;
  EXPECT_EQ(rc_unknown, 2) << unknown;
  EXPECT_NE(unknown.find("scontrol show job 777 failed"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace vigil::testing
