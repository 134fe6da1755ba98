// SPDX-License-Identifier: Apache-2.0
// The table the kubelet pod-resources plugin (lib/vigil/kubelet_pod_resources.so, built from
// pod_resources_grpc.cc) hands PodResourcesClient: gRPC and protobuf live in the plugin, so a
// daemon on a host without Kubernetes never maps them (~5 MiB of resident memory). Both sides
// are built together, so C++ types may cross. Owner: attribution.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "attribution/pod_resources_client.h"
#include "base/status.h"

namespace vigil {

struct PodResourcesPluginApi {
  // A channel to the kubelet socket (no connection yet); closed with `close`.
  void* (*open)(const std::string& socket_path);
  void (*close)(void* channel);
  void (*list)(void* channel, const std::string& socket_path, std::chrono::milliseconds deadline,
               StatusOr<std::vector<PodResources>>* out);
  void (*get)(void* channel, const std::string& namespace_name, const std::string& pod_name,
              std::chrono::milliseconds deadline, StatusOr<PodResources>* out);
};

inline constexpr char kPodResourcesPluginFile[] = "kubelet_pod_resources.so";
inline constexpr char kPodResourcesPluginSymbol[] = "vigil_pod_resources_v1";
using PodResourcesPluginEntry = const PodResourcesPluginApi* (*)();

}  // namespace vigil
