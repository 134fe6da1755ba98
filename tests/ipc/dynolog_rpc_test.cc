// SPDX-License-Identifier: Apache-2.0
// Dynolog-framed RPC over real TCP: the bytes `dyno gputrace` sends, the bytes it gets back.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"
#include "ipc/trace_rpc.h"
#include "rpc/rpc_server.h"

namespace vigil {
namespace {

std::string Frame(const std::string& json) {
  const int32_t len = static_cast<int32_t>(json.size());  // Native i32, like dyno's to_ne_bytes.
  return std::string(reinterpret_cast<const char*>(&len), 4) + json;
}

std::string Exchange(int port, const std::string& bytes) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  (void)!write(fd, bytes.data(), bytes.size());
  std::string out;
  char buf[4096];
  int32_t want = -1;
  while (want < 0 || out.size() < static_cast<size_t>(want) + 4) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) {
      break;
    }
    out.append(buf, static_cast<size_t>(n));
    if (want < 0 && out.size() >= 4) {
      std::memcpy(&want, out.data(), 4);
    }
  }
  close(fd);
  return out;
}

TEST(DynologRpcTest, GputraceRequestAndResponseBytesMatchDynolog) {
  testing_util::TempDir root;
  testing_util::FakeClock clock;
  ProcessRegistryOptions ro;
  ro.match_only_live = false;  // The registered pids are made up.
  ro.verify_credentials = false;
  ProcessRegistry registry(ro, clock.Fn());
  TraceServiceOptions to;
  to.trace_root = root.path();
  TraceService service(to, &registry);
  RpcDispatcher dispatcher;
  RegisterTraceMethods(&dispatcher, &service);
  RpcServerOptions so;
  so.tcp_listen = "127.0.0.1:0";
  RpcServer server(so, &dispatcher);
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(registry.Poll({321, 0, 0}, KinetoRequest{3, 99, {321, 1}}, IpcAddress{}).ok());

  // dyno gputrace --job-id 99 --log-file /tmp/t.json (defaults otherwise), byte for byte.
  const std::string request =
      "\n{\n    \"fn\": \"setKinetOnDemandRequest\",\n    \"config\": "
      "\"ACTIVITIES_LOG_FILE=/tmp/t.json\\nPROFILE_START_TIME=0\\nACTIVITIES_DURATION_MSECS=500"
      "\\nPROFILE_REPORT_INPUT_SHAPES=false\\nPROFILE_PROFILE_MEMORY=false\\nPROFILE_WITH_STACK="
      "false\\nPROFILE_WITH_FLOPS=false\\nPROFILE_WITH_MODULES=false\",\n    \"job_id\": 99,\n"
      "    \"pids\": [0],\n    \"process_limit\": 3\n}";
  const std::string dynolog =
      R"({"activityProfilersBusy":0,"activityProfilersTriggered":[321],"eventProfilersBusy":0,)"
      R"("eventProfilersTriggered":[],"processesMatched":[321])";
  // /tmp/t.json lies outside the trace root: after Dynolog's fields, byte for byte, comes the one
  // key vigild adds, with the file's real path (sorted last, as nlohmann sorts keys).
  const std::string reply = Exchange(server.tcp_port(), Frame(request));
  ASSERT_GE(reply.size(), 4u);
  int32_t length;
  std::memcpy(&length, reply.data(), 4);
  EXPECT_EQ(static_cast<size_t>(length), reply.size() - 4);
  const std::string json = reply.substr(4);
  const std::string prefix = dynolog + R"(,"vigilRewrittenLogFiles":)";
  EXPECT_EQ(json.substr(0, prefix.size()), prefix) << json;
  ASSERT_EQ(service.List().size(), 1u);
  const std::string trace_id = service.List()[0].trace_id;
  auto parsed = nlohmann::json::parse(json, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << json;
  EXPECT_EQ(parsed["vigilRewrittenLogFiles"]["files"][0]["path"],
            root.path() + "/" + trace_id + "/t_321.json")
      << json;
  server.Stop();
}

}  // namespace
}  // namespace vigil
