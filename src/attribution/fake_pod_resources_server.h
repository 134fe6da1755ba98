// SPDX-License-Identifier: Apache-2.0
// For tests: a kubelet pod-resources server (gRPC service v1.PodResourcesLister, the same
// definition vigild's client uses) on a unix socket, answering List and Get from pods the test
// sets, counting calls, and able to stall a reply or answer Get with UNIMPLEMENTED as older
// kubelets do. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "attribution/pod_resources_client.h"
#include "base/status.h"

namespace vigil {

class FakePodResourcesServer {
 public:
  // Serves on `socket_path` (created; removed on destruction).
  static StatusOr<std::unique_ptr<FakePodResourcesServer>> Start(const std::string& socket_path);
  ~FakePodResourcesServer();

  void SetPods(std::vector<PodResources> pods);
  void SetGetImplemented(bool implemented);
  // Each reply waits this long first (to exercise the client's deadline).
  void SetReplyDelay(std::chrono::milliseconds delay);
  int list_calls() const;
  int get_calls() const;

  struct State;

 private:
  FakePodResourcesServer() = default;
  std::shared_ptr<State> state_;
  struct Server;
  std::unique_ptr<Server> server_;
  std::string socket_path_;
};

}  // namespace vigil
