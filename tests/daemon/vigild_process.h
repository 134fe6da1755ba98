// SPDX-License-Identifier: Apache-2.0
// Test harness: starts the real vigild binary (VIGIL_BIN_DIR) as a child process on free
// loopback ports and a unix socket in a fresh temp directory, waits for /healthz with a deadline,
// and stops it with a signal. Logs go to files in the temp directory (shown on failure).
// One instance per test; not thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vigil::testing {

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

struct HttpReply {
  int status = 0;  // 0 = no answer.
  std::string content_type;
  std::string body;
};

class VigildProcess {
 public:
  VigildProcess();
  ~VigildProcess();  // SIGKILLs a daemon still running and removes the temp directory.

  // Starts vigild with the harness's endpoints followed by `extra_args`. False when exec failed.
  bool Spawn(const std::vector<std::string>& extra_args);
  // Polls /healthz until 200 or the process exits or `timeout_s` passes.
  bool WaitHealthy(double timeout_s = 60);
  // Sends `signo`; Wait() then reaps the process: its exit status, or nullopt on timeout.
  void Signal(int signo);
  std::optional<int> Wait(double timeout_s = 30);
  bool running();

  HttpReply Get(const std::string& path) const;

  const std::string& dir() const { return dir_; }
  const std::string& unix_socket() const { return unix_socket_; }
  std::string rpc_target() const { return "127.0.0.1:" + std::to_string(rpc_port_); }
  int http_port() const { return http_port_; }
  int rpc_port() const { return rpc_port_; }
  pid_t pid() const { return pid_; }
  // The --ipc-name given to vigild (unique per instance: tests run in parallel on one host).
  std::string ipc_name() const { return "vigil-test-" + std::to_string(http_port_); }
  std::string Log() const;     // stderr so far.
  std::string Stdout() const;  // stdout so far.

 private:
  std::string dir_;
  std::string unix_socket_;
  int http_port_ = 0;
  int rpc_port_ = 0;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

// Runs the built `vigil` CLI with `args` (shell words); returns its exit code, stdout+stderr in
// *out.
int RunVigilCli(const std::string& args, std::string* out);

// Runs vigild to completion (for --once and refused starts); returns exit status, fills outputs.
int RunVigildToCompletion(const std::vector<std::string>& args, std::string* out, std::string* err,
                          double timeout_s = 60);

}  // namespace vigil::testing
