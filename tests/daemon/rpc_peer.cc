// SPDX-License-Identifier: Apache-2.0
// Another local user, for the access tests: drops to the uid given (the tests run as root),
// optionally registers with vigild's IPC fabric as a Kineto process of its own job, makes each
// control call given over one TCP connection (as `dyno` does: no token) and prints each reply
// on its own line; with --kineto it then polls as Kineto does for up to 5 s and prints
// {"config_received": true|false}. Usage:
//   rpc_peer UID TARGET [--kineto IPC_NAME JOB_ID] JSON...
#include <grp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/time_util.h"
#include "kineto_spec_client.h"
#include "rpc/rpc_client.h"

namespace {

constexpr int32_t kActivities = 2;  // Kineto's ACTIVITIES request bit.

void Print(const nlohmann::json& j) { std::printf("%s\n", j.dump().c_str()); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: rpc_peer UID TARGET [--kineto IPC_NAME JOB_ID] JSON...\n");
    return 2;
  }
  const int uid = std::atoi(argv[1]);
  const std::string target = argv[2];
  if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) {
    std::perror("rpc_peer: dropping to the uid");
    return 2;
  }
  int arg = 3;
  std::unique_ptr<vigil::testing_util::KinetoSpecClient> kineto;
  int64_t job = 0;
  if (arg + 2 < argc && std::string(argv[arg]) == "--kineto") {
    job = std::atoll(argv[arg + 2]);
    kineto = std::make_unique<vigil::testing_util::KinetoSpecClient>(
        "vigil-rpc-peer-" + std::to_string(getpid()), argv[arg + 1]);
    if (!kineto->ok() ||
        !kineto->RegisterContext(0, static_cast<int32_t>(getpid()), job).has_value() ||
        !kineto->Poll(kActivities, job, vigil::testing_util::OwnAncestorPids()).has_value()) {
      std::fprintf(stderr, "rpc_peer: Kineto registration failed\n");
      return 3;
    }
    arg += 3;
  }
  auto client = vigil::RpcClient::Connect(target, 5 * vigil::kNanosPerSecond);
  if (!client.ok()) {
    std::fprintf(stderr, "rpc_peer: %s\n", client.status().ToString().c_str());
    return 3;
  }
  for (; arg < argc; ++arg) {
    nlohmann::json request = nlohmann::json::parse(argv[arg], nullptr, false);
    auto reply = client->Call(request, 5 * vigil::kNanosPerSecond);
    Print(reply.ok() ? *reply : nlohmann::json{{"transport_error", reply.status().ToString()}});
  }
  if (kineto) {
    bool received = false;
    const int64_t deadline = vigil::MonotonicNanos() + 5 * vigil::kNanosPerSecond;
    while (!received && vigil::MonotonicNanos() < deadline) {
      auto config = kineto->Poll(kActivities, job, vigil::testing_util::OwnAncestorPids());
      received = config.has_value() && config->find("ACTIVITIES_LOG_FILE=") != std::string::npos;
      if (!received) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // Kineto's poll period.
      }
    }
    Print(nlohmann::json{{"config_received", received}});
  }
  return 0;
}
