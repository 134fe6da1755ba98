// SPDX-License-Identifier: Apache-2.0
#include "client/vigil_client.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "ipc/endpoint.h"
#include "ipc/process_registry.h"
#include "ipc/wire_format.h"

struct vigil_client {
  std::unique_ptr<vigil::IpcEndpoint> endpoint;
  vigil::IpcAddress daemon;
  int timeout_ms = 1000;
  std::string job_id;
  std::mutex poll_mu;  // One request/reply exchange at a time.
  std::mutex callback_mu;
  vigil_trace_callback callback = nullptr;
  void* user_data = nullptr;
  std::atomic<int64_t> last_step_ns{0};
  std::thread poller;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;
};

namespace {

void SetError(char* err, size_t err_len, const std::string& message) {
  if (err != nullptr && err_len > 0) {
    std::snprintf(err, err_len, "%s", message.c_str());
  }
}

std::string OrEmpty(const char* s) { return s == nullptr ? std::string() : std::string(s); }

// This process and its ancestors, leaf first, as Kineto sends them.
std::vector<int32_t> AncestorPids() {
  std::vector<int32_t> pids;
  int32_t pid = static_cast<int32_t>(getpid());
  for (int i = 0; i < 32 && pid > 0; ++i) {
    pids.push_back(pid);
    auto text = vigil::ReadSmallFile(fmt::format("/proc/{}/status", pid), 64 << 10);
    if (!text.ok()) {
      break;
    }
    auto ids = vigil::ParseProcStatusIds(*text);
    if (!ids.ok()) {
      break;
    }
    pid = ids->ppid;
  }
  return pids;
}

// Sends one message and waits for the reply of the same type (older replies are skipped).
vigil::StatusOr<std::string> Exchange(vigil_client* c, std::string_view type,
                                      const std::string& payload) {
  VIGIL_ASSIGN_OR_RETURN(std::string bytes, vigil::EncodeIpcMessage(type, payload));
  VIGIL_RETURN_IF_ERROR(c->endpoint->SendTo(c->daemon, bytes));
  const int64_t deadline = vigil::MonotonicNanos() + int64_t{c->timeout_ms} * 1000000;
  while (true) {
    const int64_t left_ms = (deadline - vigil::MonotonicNanos()) / 1000000;
    if (left_ms <= 0) {
      return vigil::DeadlineExceededError("no reply from the daemon");
    }
    VIGIL_ASSIGN_OR_RETURN(vigil::ReceivedDatagram d,
                           c->endpoint->Receive(static_cast<int>(left_ms)));
    auto message = vigil::DecodeIpcMessage(d.bytes);
    if (message.ok() && message->type == type) {
      return message->payload;
    }
  }
}

}  // namespace

extern "C" {

void vigil_client_options_init(vigil_client_options* options) {
  std::memset(options, 0, sizeof(*options));
  options->gpu = -1;
  options->timeout_ms = 1000;
}

vigil_client* vigil_client_open(const vigil_client_options* options, char* err, size_t err_len) {
  vigil_client_options defaults;
  vigil_client_options_init(&defaults);
  const vigil_client_options& o = options != nullptr ? *options : defaults;
  auto c = std::make_unique<vigil_client>();
  c->timeout_ms = o.timeout_ms > 0 ? o.timeout_ms : 1000;
  std::string socket_dir = OrEmpty(o.socket_dir);
  if (socket_dir.empty()) {
    socket_dir = OrEmpty(std::getenv("KINETO_IPC_SOCKET_DIR"));
  }
  const std::string ipc_name = o.ipc_name && *o.ipc_name ? o.ipc_name : "dynolog";
  auto daemon = vigil::MakeIpcAddress(ipc_name, socket_dir);
  if (!daemon.ok()) {
    SetError(err, err_len, daemon.status().ToString());
    return nullptr;
  }
  c->daemon = *daemon;
  vigil::IpcEndpointOptions ep;
  ep.pass_credentials = false;
  ep.receive_buffer_bytes = 0;
  ep.socket_dir = socket_dir;
  if (!socket_dir.empty()) {
    std::mt19937 rng{std::random_device{}()};
    ep.name = fmt::format("vigilclient-{}-{:08x}", getpid(), rng());
  }
  auto endpoint = vigil::IpcEndpoint::Bind(ep);
  if (!endpoint.ok()) {
    SetError(err, err_len, endpoint.status().ToString());
    return nullptr;
  }
  c->endpoint = std::move(*endpoint);
  nlohmann::json reg{{"pid", static_cast<int32_t>(getpid())},
                     {"pids", AncestorPids()},
                     {"job_id", OrEmpty(o.job_id)},
                     {"team", OrEmpty(o.team)},
                     {"model", OrEmpty(o.model)},
                     {"framework", OrEmpty(o.framework)},
                     {"peak_flops", std::isfinite(o.peak_flops) ? o.peak_flops : 0.0},
                     {"gpu", o.gpu}};
  auto reply = Exchange(c.get(), vigil::kIpcTypeVigilRegister, reg.dump());
  if (!reply.ok()) {
    SetError(err, err_len, "register with vigild (" + ipc_name + "): " + reply.status().message());
    return nullptr;
  }
  auto doc = nlohmann::json::parse(*reply, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.value("ok", false)) {
    SetError(err, err_len,
             "registration refused: " +
                 (doc.is_object() ? doc.value("error", std::string("bad reply")) : "bad reply"));
    return nullptr;
  }
  c->job_id = doc.value("job_id", std::string());
  c->last_step_ns = vigil::MonotonicNanos();
  return c.release();
}

void vigil_client_close(vigil_client* client) {
  if (client == nullptr) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(client->stop_mu);
    client->stopping = true;
  }
  client->stop_cv.notify_all();
  if (client->poller.joinable()) {
    client->poller.join();
  }
  delete client;
}

const char* vigil_client_job_id(const vigil_client* client) {
  return client == nullptr ? "" : client->job_id.c_str();
}

void vigil_client_set_trace_callback(vigil_client* client, vigil_trace_callback callback,
                                     void* user_data) {
  std::lock_guard<std::mutex> lock(client->callback_mu);
  client->callback = callback;
  client->user_data = user_data;
}

int vigil_client_poll(vigil_client* client) {
  std::string config;
  {
    std::lock_guard<std::mutex> lock(client->poll_mu);
    auto reply = Exchange(client, vigil::kIpcTypeVigilPoll, "{}");
    if (!reply.ok()) {
      return -1;
    }
    auto doc = nlohmann::json::parse(*reply, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.value("ok", false)) {
      return -1;
    }
    config = doc.value("config", std::string());
  }
  if (config.empty()) {
    return 0;
  }
  std::lock_guard<std::mutex> lock(client->callback_mu);
  if (client->callback != nullptr) {
    client->callback(config.c_str(), client->user_data);
  }
  return 1;
}

int vigil_client_start_polling(vigil_client* client, int interval_ms) {
  if (client->poller.joinable() || interval_ms <= 0) {
    return -1;
  }
  client->poller = std::thread([client, interval_ms] {
    std::unique_lock<std::mutex> lock(client->stop_mu);
    while (!client->stopping) {
      lock.unlock();
      (void)vigil_client_poll(client);
      lock.lock();
      client->stop_cv.wait_for(lock, std::chrono::milliseconds(interval_ms),
                               [client] { return client->stopping; });
    }
  });
  return 0;
}

int vigil_client_report_steps(vigil_client* client, int64_t steps, double step_seconds,
                              uint64_t input_bytes, double model_flops) {
  if (steps <= 0 || !std::isfinite(step_seconds) || step_seconds < 0 ||
      !std::isfinite(model_flops) || model_flops < 0) {
    return -1;
  }
  nlohmann::json report{{"steps", steps},
                        {"step_seconds", step_seconds},
                        {"input_bytes", input_bytes},
                        {"model_flops", model_flops}};
  auto bytes = vigil::EncodeIpcMessage(vigil::kIpcTypeVigilStep, report.dump());
  if (!bytes.ok()) {
    return -1;
  }
  return client->endpoint->SendTo(client->daemon, *bytes).ok() ? 0 : -1;
}

int vigil_client_step_end(vigil_client* client, uint64_t input_bytes, double model_flops) {
  const int64_t now = vigil::MonotonicNanos();
  const int64_t previous = client->last_step_ns.exchange(now);
  return vigil_client_report_steps(client, 1, static_cast<double>(now - previous) / 1e9,
                                   input_bytes, model_flops);
}

}  // extern "C"
