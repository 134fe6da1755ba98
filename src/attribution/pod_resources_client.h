// SPDX-License-Identifier: Apache-2.0
// A client of the kubelet's pod-resources API (gRPC service v1.PodResourcesLister on a unix
// socket, by default /var/lib/kubelet/pod-resources/kubelet.sock): which pod and container holds
// which device. Kubernetes publishes no pod UID or container id there, only names, so this is
// what turns "GPU-3f2a... is in use" into namespace/pod/container. Every call has a deadline and
// a capped reply size; the results are plain structs so no caller sees protobuf. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace vigil {

inline constexpr char kDefaultKubeletPodResourcesSocket[] =
    "/var/lib/kubelet/pod-resources/kubelet.sock";

// One extended resource of a container: resource_name "nvidia.com/gpu" with the device ids the
// device plugin advertised (GPU UUIDs, "MIG-..." UUIDs, or indexes). Devices from dynamic
// resource allocation appear as their CDI names split at '=' ("nvidia.com/gpu=0" -> resource
// "nvidia.com/gpu", id "0").
struct PodDevices {
  std::string resource_name;
  std::vector<std::string> device_ids;
  bool operator==(const PodDevices&) const = default;
};

struct PodContainer {
  std::string name;
  std::vector<PodDevices> devices;
  bool operator==(const PodContainer&) const = default;
};

struct PodResources {
  std::string name;
  std::string namespace_name;
  std::vector<PodContainer> containers;
  bool operator==(const PodResources&) const = default;
};

class PodResourcesClient {
 public:
  // Replies larger than this are refused (the kubelet's own cap is 16 MiB).
  static constexpr int kMaxReplyBytes = 16 << 20;

  explicit PodResourcesClient(std::string socket_path);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  const std::string& socket_path() const { return socket_path_; }

  // Every pod the kubelet runs with its containers' devices. Unavailable when nothing listens,
  // DeadlineExceeded past `deadline`.
  StatusOr<std::vector<PodResources>> List(std::chrono::milliseconds deadline);
  // One pod. Unimplemented from kubelets without the KubeletPodResourcesGet feature.
  StatusOr<PodResources> Get(const std::string& namespace_name, const std::string& pod_name,
                             std::chrono::milliseconds deadline);

 private:
  struct Impl;
  std::string socket_path_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vigil
