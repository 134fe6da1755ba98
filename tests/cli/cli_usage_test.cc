// SPDX-License-Identifier: Apache-2.0
// How the built programs (vigil, vigild, vigil-fleet) say what went wrong before any work: an
// unknown command or flag is named with the closest valid one, a command group lists its
// commands, every usage error exits 2; Dynolog's `dyno` names work; the HTTP port dialled as the
// RPC port and an unreachable vigil-fleet are said in full.
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "httpd/guarded_server.h"
#include "rpc/dispatcher.h"
#include "rpc/rpc_server.h"
#include "vigil_run.h"

namespace vigil {
namespace {

using testing::Contains;
using testing::RunResult;

class CliUsageTest : public ::testing::Test {
 protected:
  RunResult Vigil(const std::string& args, const std::string& program = "vigil") {
    return testing::RunProgram(dir_.path(), args, program);
  }
  testing::TempDir dir_;
};

TEST_F(CliUsageTest, AnUnknownCommandIsNamedWithTheClosestOne) {
  RunResult r = Vigil("stauts");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil: unknown command 'stauts'; did you mean 'status'?\n");
  r = Vigil("fleet jbos");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil fleet: unknown command 'jbos'; did you mean 'jobs'?\n");
  r = Vigil("deploy-everything");  // Nothing near: the valid commands instead.
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err,
                       "vigil: unknown command 'deploy-everything'; the commands are: "
                       "status, metrics, top, gpu, "))
      << r.err;
  EXPECT_TRUE(Contains(r.err, ", analyze, trace, snoop, profile\n")) << r.err;
}

TEST_F(CliUsageTest, AnUnknownFlagIsNamedWithTheClosestOne) {
  RunResult r = Vigil("status --jsn");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil status: unknown flag '--jsn'; did you mean '--json'?\n");
  r = Vigil("--hots 127.0.0.1 status");  // A global flag, before the command.
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil status: unknown flag '--hots'; did you mean '--host'?\n");
  r = Vigil("trace --duraton-ms=100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil trace: unknown flag '--duraton-ms'; did you mean '--duration-ms'?\n");
  r = Vigil("status --frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil status: unknown flag '--frobnicate' (see 'vigil status --help')\n");
}

TEST_F(CliUsageTest, ACommandGroupWithoutItsCommandListsThem) {
  RunResult r = Vigil("gpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil gpu: needs a command: pause, resume (see 'vigil gpu --help')\n");
  r = Vigil("fleet");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "vigil fleet: needs a command: report, jobs, hosts, job")) << r.err;
  r = Vigil("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "vigil: needs a command: status, metrics")) << r.err;
}

// CLI11's own codes (106 for a missing argument, 109 for extras, 105 for a bad value) never
// reach the shell: 2 in every program, 0 for --help.
TEST_F(CliUsageTest, EveryUsageErrorOfEveryProgramExitsTwo) {
  for (const char* args : {"analyze", "trace --duration-ms soon", "--timeout soon status",
                           "status extra", "fleet report --by planet", "gpu pause --duration x"}) {
    RunResult r = Vigil(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "vigil")) << args << ": " << r.err;
  }
  EXPECT_EQ(Vigil("--help").exit_code, 0);
  EXPECT_EQ(Vigil("fleet --help").exit_code, 0);
  for (const char* program : {"vigild", "vigil-fleet"}) {
    if (!std::filesystem::exists(std::string(VIGIL_BIN_DIR) + "/" + program)) continue;
    RunResult r = Vigil("--no-such-flag", program);
    EXPECT_EQ(r.exit_code, 2) << program << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, std::string(program) + ": unknown flag '--no-such-flag'")) << r.err;
    EXPECT_EQ(Vigil("--help", program).exit_code, 0) << program;
  }
  if (std::filesystem::exists(std::string(VIGIL_BIN_DIR) + "/vigil-fleet")) {
    RunResult r = Vigil("", "vigil-fleet");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(Contains(r.err, "vigil-fleet: needs a command: serve")) << r.err;
    r = Vigil("serv", "vigil-fleet");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "vigil-fleet: unknown command 'serv'; did you mean 'serve'?\n");
    r = Vigil("serve --lisen 127.0.0.1:0", "vigil-fleet");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "vigil-fleet serve: unknown flag '--lisen'; did you mean '--listen'?\n");
  }
  if (std::filesystem::exists(std::string(VIGIL_BIN_DIR) + "/vigild")) {
    RunResult r = Vigil("--collector.proc_cpuu", "vigild");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(
        r.err,
        "vigild: unknown flag '--collector.proc_cpuu'; did you mean '--collector.proc_cpu'?\n");
    // Two edits from --once, but a different word: no guess.
    r = Vigil("--nope", "vigild");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "vigild: unknown flag '--nope' (see 'vigild --help')\n");
  }
}

// Nobody listens on port 1: the message is one whole sentence on what to do, with the new and
// the old spelling of the URL flag.
TEST_F(CliUsageTest, AnUnreachableFleetSaysHowToStartIt) {
  for (const char* args :
       {"fleet jobs --fleet-url http://127.0.0.1:1", "fleet hosts --fleet http://127.0.0.1:1",
        "fleet profiles --fleet-url http://127.0.0.1:1"}) {
    RunResult r = Vigil(args);
    EXPECT_EQ(r.exit_code, 3) << args << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "cannot reach vigil-fleet at http://127.0.0.1:1 (")) << r.err;
    EXPECT_TRUE(Contains(r.err, "Start it with `vigil-fleet serve --listen HOST:PORT`")) << r.err;
    EXPECT_TRUE(Contains(r.err, "--fleet-url URL or $VIGIL_FLEET_URL.\n")) << r.err;
  }
  RunResult r = Vigil("fleet jobs --fleet-url 127.0.0.1:9480");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "--fleet-url must be http[s]://HOST:PORT")) << r.err;
}

// A scripted vigild (RpcServer with canned replies) that records what it was asked.
class DynoNamesTest : public CliUsageTest {
 protected:
  void SetUp() override {
    d_.Register("dcgmProfPause", [this](const nlohmann::json& req, const CallerInfo&) {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = req;
      return nlohmann::json{{"status", true}};
    });
    d_.Register("dcgmProfResume", [this](const nlohmann::json& req, const CallerInfo&) {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = req;
      return nlohmann::json{{"status", true}};
    });
    d_.Register("vigilTraceStart", [this](const nlohmann::json& req, const CallerInfo&) {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = req;
      return nlohmann::json{{"matched", 0}, {"triggered", 0}};
    });
    RpcServerOptions o;
    o.tcp_listen = "127.0.0.1:0";
    server_ = std::make_unique<RpcServer>(o, &d_);
    ASSERT_TRUE(server_->Start().ok());
  }
  // Dynolog's global flags: --hostname and --port.
  std::string Dyno(const std::string& args) {
    return "--hostname 127.0.0.1 --port " + std::to_string(server_->tcp_port()) + " " + args;
  }
  nlohmann::json Last() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }

  RpcDispatcher d_;
  std::unique_ptr<RpcServer> server_;
  std::mutex mu_;
  nlohmann::json last_;
};

TEST_F(DynoNamesTest, DcgmPauseAndResumeTakeDynologsFlags) {
  RunResult r = Vigil(Dyno("dcgm-pause --duration-s 60"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Last()["fn"], "dcgmProfPause");
  EXPECT_EQ(Last()["duration_s"], 60);
  r = Vigil(Dyno("dcgm-pause"));  // dyno's default: 300 s.
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Last()["duration_s"], 300);
  r = Vigil(Dyno("dcgm-resume"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Last()["fn"], "dcgmProfResume");
}

// `dyno gputrace` with every flag it has: the same request as `vigil trace`.
TEST_F(DynoNamesTest, GputraceIsTraceWithTheSameFlags) {
  RunResult r = Vigil(
      Dyno("gputrace --job-id 7 --pids 11,12 --duration-ms 300 --iterations 5 --log-file "
           "/tmp/t.json --profile-start-time 1700000000000 --profile-start-iteration-roundup 4 "
           "--process-limit 2 --record-shapes --profile-memory --with-stacks --with-flops "
           "--with-modules --fail-on-no-process"));
  const nlohmann::json req = Last();
  ASSERT_EQ(req.value("fn", ""), "vigilTraceStart") << r.err;
  EXPECT_EQ(req["job_id"], "7");
  EXPECT_EQ(req["pids"], nlohmann::json::array({11, 12}));
  EXPECT_EQ(req["duration_ms"], 300);
  EXPECT_EQ(req["iterations"], 5);
  EXPECT_EQ(req["log_file"], "/tmp/t.json");
  EXPECT_EQ(req["profile_start_time"], 1700000000000);
  EXPECT_EQ(req["profile_start_iteration_roundup"], 4);
  EXPECT_EQ(req["process_limit"], 2);
  for (const char* flag :
       {"record_shapes", "profile_memory", "with_stacks", "with_flops", "with_modules"}) {
    EXPECT_EQ(req[flag], true) << flag;
  }
  EXPECT_NE(r.exit_code, 2) << "every flag parsed: " << r.err;
}

// vigild's HTTP port (the same HTTP server layer) given as the RPC port: said in so many words,
// not a timeout or a garbled frame.
TEST_F(CliUsageTest, TheHttpPortGivenAsTheRpcPortIsSaidSo) {
  GuardedServer http(HttpLimits{}, [](httplib::Request&, httplib::Response&) { return true; });
  http.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("up 1\n", "text/plain");
  });
  StatusOr<int> port = http.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  RunResult r = Vigil("--host 127.0.0.1:" + std::to_string(*port) + " --timeout 20s status");
  http.Stop();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(Contains(r.err, "127.0.0.1:" + std::to_string(*port) + " answered in HTTP")) << r.err;
  EXPECT_TRUE(Contains(r.err, "not an RPC port; vigild takes RPC on port 1778")) << r.err;
}

}  // namespace
}  // namespace vigil
