// SPDX-License-Identifier: Apache-2.0
#include "ipc/trace_rpc.h"

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"
#include "rpc/framing.h"

namespace vigil {
namespace {

class TraceRpcTest : public ::testing::Test {
 protected:
  TraceRpcTest() {
    ProcessRegistryOptions ro;
    ro.verify_credentials = false;
    registry_ = std::make_unique<ProcessRegistry>(ro, clock_.Fn());
    TraceServiceOptions to;
    to.trace_root = root_.path();
    service_ = std::make_unique<TraceService>(to, registry_.get());
    RegisterTraceMethods(&dispatcher_, service_.get());
  }

  void Register(int pid, int64_t job) {
    ASSERT_TRUE(registry_->Poll({pid, 0, 0}, KinetoRequest{2, job, {pid, 1}}, IpcAddress{}).ok());
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
  EXPECT_EQ(reply.dump(), expected);
  // Framed as Dynolog frames it: int32 length, then the JSON text.
  auto framed = EncodeFrame(reply.dump());
  ASSERT_TRUE(framed.ok());
  EXPECT_EQ(DecodeFrameLength(framed->data()), static_cast<int32_t>(expected.size()));
  EXPECT_EQ(framed->substr(4), expected);
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

}  // namespace
}  // namespace vigil
