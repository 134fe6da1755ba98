// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_rpc.h"

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/time_util.h"
#include "ipc/ipc_test_util.h"
#include "rpc/framing.h"

namespace vigil {
namespace {

class TraceRpcTest : public ::testing::Test {
 protected:
  TraceRpcTest() {
    ProcessRegistryOptions ro;
    ro.match_only_live = false;  // The registered pids are made up.
    ro.verify_credentials = false;
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
    TraceServiceOptions to;
    to.trace_root = root_.path();
    service_ = std::make_unique<TraceService>(to, registry_.get());
    RegisterTraceMethods(&dispatcher_, service_.get());
  }

  void Register(int pid, int64_t job, int uid = 0) {
    ASSERT_TRUE(
        registry_->Poll({pid, uid, uid}, KinetoRequest{2, job, {pid, 1}}, IpcAddress{}).ok());
  }

  nlohmann::json Call(const std::string& text) {
    auto request = nlohmann::json::parse(text, nullptr, false);
    EXPECT_FALSE(request.is_discarded());
    return dispatcher_.Dispatch(request, caller_);
  }

  testing_util::TempDir root_;
  testing_util::FakeClock clock_;
  std::unique_ptr<ProcessRegistry> registry_;
  std::unique_ptr<TraceService> service_;
  RpcDispatcher dispatcher_;
  CallerInfo caller_;
};

// The request exactly as `dyno gputrace --job-id 4242 --pids 0 --log-file /tmp/gpu_trace.json`
// writes it (cli/src/commands/gputrace.rs, newlines escaped inside "config").
constexpr char kDynoRequest[] = R"(
{
    "fn": "setKinetOnDemandRequest",
    "config": "ACTIVITIES_LOG_FILE=/tmp/gpu_trace.json\nPROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=500\nPROFILE_REPORT_INPUT_SHAPES=false\nPROFILE_PROFILE_MEMORY=false\nPROFILE_WITH_STACK=false\nPROFILE_WITH_FLOPS=false\nPROFILE_WITH_MODULES=false",
    "job_id": 4242,
    "pids": [0],
    "process_limit": 3
})";

TEST_F(TraceRpcTest, VigilTraceStartKeepsTheUploadRequestAndRefusesABadOne) {
  Register(600, 4242);
  nlohmann::json reply = Call(R"({"fn":"vigilTraceStart","job_id":"4242","duration_ms":100,)"
                              R"("upload":{"request_id":"prof-12-ab"}})");
  ASSERT_FALSE(reply.contains("error")) << reply.dump();
  EXPECT_EQ(reply["upload"]["request_id"], "prof-12-ab");
  auto session = service_->Get(reply["trace_id"].get<std::string>());
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->upload_request_id, "prof-12-ab");

  for (const char* bad : {R"("upload":"prof-1")", R"("upload":{"request_id":"../x"})",
                          R"("upload":{"request_id":""})", R"("upload":{})"}) {
    nlohmann::json refused =
        Call(std::string(R"({"fn":"vigilTraceStart","job_id":"1",)") + bad + "}");
    EXPECT_TRUE(refused.contains("error")) << bad << " -> " << refused.dump();
  }
  nlohmann::json plain = Call(R"({"fn":"vigilTraceStart","job_id":"1","duration_ms":100})");
  EXPECT_FALSE(plain.contains("upload")) << plain.dump();
}

TEST_F(TraceRpcTest, SetKinetOnDemandRequestAnswersByteForByteLikeDynolog) {
  Register(600, 4242);
  Register(601, 4242);
  Register(700, 1);
  nlohmann::json reply = Call(kDynoRequest);
  const std::string expected =
      R"({"activityProfilersBusy":0,"activityProfilersTriggered":[600,601],)"
      R"("eventProfilersBusy":0,"eventProfilersTriggered":[],"processesMatched":[600,601]})";
  ASSERT_TRUE(reply.contains(kRewrittenLogFilesKey)) << reply.dump();  // /tmp is outside the root.
  reply.erase(kRewrittenLogFilesKey);
  EXPECT_EQ(reply.dump(), expected);
  // Framed as Dynolog frames it: int32 length, then the JSON text.
  auto framed = EncodeFrame(reply.dump());
  ASSERT_TRUE(framed.ok());
  EXPECT_EQ(DecodeFrameLength(framed->data()), static_cast<int32_t>(expected.size()));
  EXPECT_EQ(framed->substr(4), expected);
}

// The requested /tmp/gpu_trace.json lies outside the trace root: the reply says where each
// process really writes (Kineto's <name>_<pid>.json in the trace's own directory).
TEST_F(TraceRpcTest, SetKinetOnDemandRequestNamesTheRealPathsOfARewrittenLogFile) {
  Register(600, 4242);
  Register(601, 4242);
  nlohmann::json reply = Call(kDynoRequest);
  const nlohmann::json& files = reply[kRewrittenLogFilesKey];
  ASSERT_TRUE(files.is_object()) << reply.dump();
  const std::string id = files["trace_id"];
  ASSERT_TRUE(service_->Get(id).ok());
  const std::string dir = root_.path() + "/" + id;
  EXPECT_EQ(files["requested"], "/tmp/gpu_trace.json");
  EXPECT_EQ(files["log_file"], dir + "/gpu_trace.json");
  EXPECT_NE(files["note"].get<std::string>().find("outside the trace root"), std::string::npos);
  EXPECT_EQ(files["files"],
            nlohmann::json::parse(fmt::format(R"([{{"pid":600,"path":"{0}/gpu_trace_600.json"}},)"
                                              R"({{"pid":601,"path":"{0}/gpu_trace_601.json"}}])",
                                              dir)));
  // A path the daemon keeps as asked is not rewritten, and the reply is Dynolog's alone.
  Register(700, 77);
  nlohmann::json kept = Call(
      R"({"fn":"setKinetOnDemandRequest","config":"ACTIVITIES_DURATION_MSECS=100","job_id":77,)"
      R"("pids":[0],"process_limit":3})");
  EXPECT_EQ(kept["activityProfilersTriggered"], nlohmann::json::array({700}));
  EXPECT_FALSE(kept.contains(kRewrittenLogFilesKey)) << kept.dump();
}

TEST_F(TraceRpcTest, BusyAndLimitCountAsDynologCountsThem) {
  Register(600, 4242);
  Register(601, 4242);
  Register(602, 4242);
  Register(603, 4242);
  ASSERT_EQ(Call(kDynoRequest)["activityProfilersTriggered"].size(), 3u);
  // All three are now busy; the fourth is free and the limit (3) is not reached by busy ones.
  nlohmann::json second = Call(kDynoRequest);
  EXPECT_EQ(second["processesMatched"].size(), 4u);
  EXPECT_EQ(second["activityProfilersTriggered"], nlohmann::json::array({603}));
  EXPECT_EQ(second["activityProfilersBusy"], 3);
}

// A busy process is named with what holds it: the holding trace, who asked for it, and when it
// should end (its start time plus its duration) and be freed at the latest (plus the 60 s grace).
TEST_F(TraceRpcTest, BusyProcessesNameTheTraceHoldingThemAndWhenItShouldEnd) {
  const int other = static_cast<int>(geteuid()) == 0 ? 1000 : static_cast<int>(geteuid()) + 1;
  Register(600, 4242, 0);
  Register(601, 4242, other);
  constexpr int64_t kStartMs = 4000000000000;  // Far ahead: the holder stays queued.
  caller_.peer = "unix:pid=77,uid=0";
  nlohmann::json holder = Call(fmt::format(
      R"({{"fn":"vigilTraceStart","job_id":"4242","profile_start_time":{},"duration_ms":1500,)"
      R"("reason":"slow step"}})",
      kStartMs));
  ASSERT_EQ(holder["triggered"], 2) << holder.dump();
  const std::string holder_id = holder["trace_id"];

  nlohmann::json second =
      Call(R"({"fn":"vigilTraceStart","job_id":"4242","pids":[600],"duration_ms":100})");
  EXPECT_EQ(second["triggered"], 0) << second.dump();
  ASSERT_EQ(second["busy"].size(), 1u) << second.dump();
  const nlohmann::json& b = second["busy"][0];
  EXPECT_EQ(b["pid"], 600);
  EXPECT_EQ(b["held_by"], holder_id);
  EXPECT_EQ(b["holder"]["trace_id"], holder_id);
  EXPECT_EQ(b["holder"]["origin"], "vigilTraceStart");
  EXPECT_EQ(b["holder"]["requested_by"], "unix:pid=77,uid=0");
  EXPECT_EQ(b["holder"]["reason"], "slow step");
  EXPECT_EQ(b["holder"]["state"], "queued");
  EXPECT_EQ(b["holder"]["expected_end_unix_ms"], kStartMs + 1500);
  EXPECT_EQ(b["holder"]["expected_end"], FormatTimestamp((kStartMs + 1500) * 1000000));
  EXPECT_EQ(b["holder"]["gives_up_at_unix_ms"], kStartMs + 1500 + 60000);
  // vigilTraceStatus of the refused session tells the same.
  nlohmann::json status = Call(R"({"fn":"vigilTraceStatus","trace_id":")" +
                               second["trace_id"].get<std::string>() + R"("})");
  EXPECT_EQ(status["busy"][0]["holder"]["expected_end_unix_ms"], kStartMs + 1500);

  // Another user sees what holds its own process, but not who asked for a trace that also
  // holds root's process, nor why.
  caller_.transport = CallerInfo::Transport::kTcp;
  caller_.uid = other;
  nlohmann::json theirs = Call(R"({"fn":"vigilTraceStart","pids":[601],"duration_ms":100})");
  ASSERT_EQ(theirs["busy"].size(), 1u) << theirs.dump();
  EXPECT_EQ(theirs["busy"][0]["holder"]["trace_id"], holder_id);
  EXPECT_EQ(theirs["busy"][0]["holder"]["expected_end_unix_ms"], kStartMs + 1500);
  EXPECT_TRUE(theirs["busy"][0]["holder"]["requested_by"].is_null()) << theirs.dump();
  EXPECT_FALSE(theirs["busy"][0]["holder"].contains("reason")) << theirs.dump();
}

TEST_F(TraceRpcTest, NoMatchGivesEmptyListsAsDynologDoes) {
  nlohmann::json reply = Call(kDynoRequest);
  EXPECT_EQ(reply.dump(),
            R"({"activityProfilersBusy":0,"activityProfilersTriggered":[],"eventProfilersBusy":0,)"
            R"("eventProfilersTriggered":[],"processesMatched":[]})");
}

TEST_F(TraceRpcTest, MissingFieldsFailLikeDynolog) {
  EXPECT_EQ(Call(R"({"fn":"setKinetOnDemandRequest","config":"x"})").dump(),
            R"({"status":"failed"})");
  auto refused = Call(R"({"fn":"setKinetOnDemandRequest","config":"EVENTS=a","pids":[]})");
  EXPECT_EQ(refused["status"].get<std::string>().rfind("failed: ", 0), 0u);
}

TEST_F(TraceRpcTest, VigilTraceStartReturnsTraceIdAndStatusFollowsIt) {
  Register(600, 4242);
  nlohmann::json start =
      Call(R"({"fn":"vigilTraceStart","job_id":"4242","duration_ms":200,"log_file":"/etc/t.json",)"
           R"("record_shapes":true,"config":{"ACTIVITY_TYPES":"kernel"}})");
  ASSERT_TRUE(start.contains("trace_id")) << start.dump();
  EXPECT_EQ(start["matched"], 1);
  EXPECT_EQ(start["log_file_rewritten"], true);
  EXPECT_EQ(start["processes"][0]["state"], "queued");
  EXPECT_NE(start["config"].get<std::string>().find("PROFILE_REPORT_INPUT_SHAPES=true"),
            std::string::npos);
  const std::string id = start["trace_id"];
  nlohmann::json status = Call(R"({"fn":"vigilTraceStatus","trace_id":")" + id + R"("})");
  EXPECT_EQ(status["trace_id"], id);
  EXPECT_EQ(status["done"], false);
  nlohmann::json list = Call(R"({"fn":"vigilTraceList"})");
  EXPECT_EQ(list["sessions"].size(), 1u);
  EXPECT_EQ(list["processes"].size(), 1u);
  nlohmann::json cancel = Call(R"({"fn":"vigilTraceCancel","trace_id":")" + id + R"("})");
  EXPECT_EQ(cancel["done"], true);
}

TEST_F(TraceRpcTest, VigilTraceStartExplainsAnEmptyMatchAndRefusesUnknownKeys) {
  Register(700, 1);
  nlohmann::json start = Call(R"({"fn":"vigilTraceStart","job_id":"4242"})");
  EXPECT_EQ(start["matched"], 0);
  EXPECT_NE(start["why_nothing_matched"]["reason"].get<std::string>().find("none has job id"),
            std::string::npos);
  nlohmann::json bad =
      Call(R"({"fn":"vigilTraceStart","job_id":"1","config":{"ENABLE_IPC_FABRIC":"0"}})");
  EXPECT_NE(bad["error"].get<std::string>().find("not allowed"), std::string::npos);
}

TEST_F(TraceRpcTest, MutatingMethodsNeedControlAccess) {
  CallerInfo remote;
  remote.transport = CallerInfo::Transport::kTcp;
  remote.loopback = false;
  auto reply = dispatcher_.Dispatch(nlohmann::json::parse(kDynoRequest), remote);
  EXPECT_TRUE(reply.contains("error"));
}

// UBSan found start_delay_ms overflowing now + delay; every numeric field is now typed and bounded.
TEST_F(TraceRpcTest, NumericFieldsAreIntegersWithinTheirRange) {
  Register(600, 4242);
  for (const char* bad :
       {R"("start_delay_ms":9223372036854775807)", R"("start_delay_ms":18446744073709551615)",
        R"("start_delay_ms":1e300)", R"("start_delay_ms":"5")", R"("start_delay_ms":-1)",
        R"("duration_ms":-1)", R"("duration_ms":1.5)", R"("process_limit":10000000000)",
        R"("profile_start_time":9223372036854775807)", R"("iterations":-9223372036854775807)",
        R"("profile_start_iteration_roundup":0)"}) {
    nlohmann::json reply =
        Call(std::string(R"({"fn":"vigilTraceStart","job_id":"4242",)") + bad + "}");
    ASSERT_TRUE(reply.contains("error")) << bad << " -> " << reply.dump();
    EXPECT_NE(reply["error"].get<std::string>().find("must be an integer in ["), std::string::npos)
        << reply.dump();
  }
  nlohmann::json dyno =
      Call(R"({"fn":"setKinetOnDemandRequest","config":"ACTIVITIES_DURATION_MSECS=100","pids":[0],)"
           R"("process_limit":4294967297})");
  EXPECT_EQ(dyno["status"].get<std::string>().rfind("failed", 0), 0u) << dyno.dump();
  nlohmann::json ok =
      Call(R"({"fn":"vigilTraceStart","job_id":"4242","start_delay_ms":3000,"duration_ms":100})");
  EXPECT_EQ(ok["triggered"], 1) << ok.dump();
}

// Finding: any loopback user could trace or cancel another user's job and list every session.
TEST_F(TraceRpcTest, UnprivilegedCallerSeesAndTracesOnlyItsOwnProcesses) {
  const int other = static_cast<int>(geteuid()) == 0 ? 1000 : static_cast<int>(geteuid()) + 1;
  Register(600, 4242, 0);      // Root's process (the victim).
  Register(601, 4242, other);  // The caller's own.
  nlohmann::json root_trace =
      Call(R"({"fn":"vigilTraceStart","job_id":"4242","pids":[600],"duration_ms":100})");
  ASSERT_EQ(root_trace["triggered"], 1) << root_trace.dump();
  const std::string root_id = root_trace["trace_id"];

  caller_.transport = CallerInfo::Transport::kTcp;
  caller_.uid = other;
  nlohmann::json dyno = Call(kDynoRequest);
  EXPECT_EQ(dyno["processesMatched"], nlohmann::json::array({601})) << dyno.dump();
  nlohmann::json start = Call(R"({"fn":"vigilTraceStart","pids":[600]})");
  EXPECT_EQ(start["matched"], 0) << start.dump();
  for (const auto& p : start["why_nothing_matched"]["registered"]) {
    EXPECT_NE(p["pid"], 600) << "another user's process was shown";
  }
  for (const char* fn : {"vigilTraceCancel", "vigilTraceStatus"}) {
    nlohmann::json refused =
        Call(std::string(R"({"fn":")") + fn + R"(","trace_id":")" + root_id + R"("})");
    ASSERT_TRUE(refused.contains("error")) << refused.dump();
    EXPECT_NE(refused["error"].get<std::string>().find("permission denied"), std::string::npos);
  }
  EXPECT_FALSE(service_->Get(root_id)->cancelled);
  nlohmann::json list = Call(R"({"fn":"vigilTraceList"})");
  for (const auto& s : list["sessions"]) {
    EXPECT_NE(s["trace_id"], root_id);
  }
  ASSERT_EQ(list["processes"].size(), 1u) << list.dump();
  EXPECT_EQ(list["processes"][0]["pid"], 601);
  // Its own trace it may follow and cancel.
  std::string own_id;
  for (const TraceSession& s : service_->List()) {
    if (s.owner_uid == other && s.origin == "setKinetOnDemandRequest") {
      own_id = s.trace_id;
    }
  }
  nlohmann::json cancel = Call(R"({"fn":"vigilTraceCancel","trace_id":")" + own_id + R"("})");
  EXPECT_FALSE(cancel.contains("error")) << cancel.dump();
  // A caller whose uid is unknown may not make control calls at all.
  caller_.uid = -1;
  EXPECT_TRUE(Call(kDynoRequest).contains("error"));
}

}  // namespace
}  // namespace vigil
