// SPDX-License-Identifier: Apache-2.0
// C++ wrapper over libvigil_client's C API (vigil_client.h): RAII handle, std::function callback.
// Header-only so it adds nothing to the shared library's ABI. Owner: client. Same threading as
// the C API.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "client/vigil_client.h"

namespace vigil::client {

struct Options {
  std::string ipc_name = "dynolog";
  std::string socket_dir;
  std::string job_id, team, model, framework;
  double peak_flops = 0;
  int gpu = -1;
  int timeout_ms = 1000;
};

class Client {
 public:
  // Returns nullptr and fills *error when the daemon cannot be reached.
  static std::unique_ptr<Client> Open(const Options& options, std::string* error) {
    vigil_client_options o;
    vigil_client_options_init(&o);
    o.ipc_name = options.ipc_name.c_str();
    o.socket_dir = options.socket_dir.empty() ? nullptr : options.socket_dir.c_str();
    o.job_id = options.job_id.c_str();
    o.team = options.team.c_str();
    o.model = options.model.c_str();
    o.framework = options.framework.c_str();
    o.peak_flops = options.peak_flops;
    o.gpu = options.gpu;
    o.timeout_ms = options.timeout_ms;
    char err[256] = "";
    vigil_client* c = vigil_client_open(&o, err, sizeof(err));
    if (c == nullptr) {
      if (error != nullptr) {
        *error = err;
      }
      return nullptr;
    }
    return std::unique_ptr<Client>(new Client(c));
  }
  ~Client() { vigil_client_close(client_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  std::string job_id() const { return vigil_client_job_id(client_); }
  void OnTrace(std::function<void(const std::string&)> callback) {
    callback_ = std::move(callback);
    vigil_client_set_trace_callback(client_, &Client::Trampoline, this);
  }
  int Poll() { return vigil_client_poll(client_); }
  bool StartPolling(int interval_ms) {
    return vigil_client_start_polling(client_, interval_ms) == 0;
  }
  bool ReportSteps(int64_t steps, double seconds, uint64_t input_bytes, double model_flops) {
    return vigil_client_report_steps(client_, steps, seconds, input_bytes, model_flops) == 0;
  }
  bool StepEnd(uint64_t input_bytes, double model_flops) {
    return vigil_client_step_end(client_, input_bytes, model_flops) == 0;
  }

 private:
  explicit Client(vigil_client* client) : client_(client) {}
  static void Trampoline(const char* config, void* self) {
    static_cast<Client*>(self)->callback_(config);
  }
  vigil_client* client_;
  std::function<void(const std::string&)> callback_;
};

}  // namespace vigil::client
