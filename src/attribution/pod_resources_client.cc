// SPDX-License-Identifier: Apache-2.0
#include "attribution/pod_resources_client.h"

#include <mutex>
#include <utility>

#include "attribution/pod_resources_plugin.h"
#include "base/plugin.h"

namespace vigil {

// The plugin, and with it gRPC's threads and the channel, only once the kubelet is first asked:
// hosts without Kubernetes never load them.
struct PodResourcesClient::Impl {
  std::mutex mu;
  const PodResourcesPluginApi* api = nullptr;  // Guarded by mu, as is channel.
  void* channel = nullptr;

  StatusOr<void*> Channel(const std::string& socket_path) {
    std::lock_guard<std::mutex> lock(mu);
    if (channel == nullptr) {
      VIGIL_ASSIGN_OR_RETURN(void* entry,
                             LoadPluginSymbol(kPodResourcesPluginFile, kPodResourcesPluginSymbol,
                                              "kubelet pod-resources"));
      api = reinterpret_cast<PodResourcesPluginEntry>(entry)();
      channel = api->open(socket_path);
    }
    return channel;
  }

  ~Impl() {
    if (channel != nullptr) api->close(channel);
  }
};

PodResourcesClient::PodResourcesClient(std::string socket_path)
    : socket_path_(std::move(socket_path)), impl_(std::make_unique<Impl>()) {}

PodResourcesClient::~PodResourcesClient() = default;

StatusOr<std::vector<PodResources>> PodResourcesClient::List(std::chrono::milliseconds deadline) {
  VIGIL_ASSIGN_OR_RETURN(void* channel, impl_->Channel(socket_path_));
  StatusOr<std::vector<PodResources>> out = InternalError("no reply");
  impl_->api->list(channel, socket_path_, deadline, &out);
  return out;
}

StatusOr<PodResources> PodResourcesClient::Get(const std::string& namespace_name,
                                               const std::string& pod_name,
                                               std::chrono::milliseconds deadline) {
  VIGIL_ASSIGN_OR_RETURN(void* channel, impl_->Channel(socket_path_));
  StatusOr<PodResources> out = InternalError("no reply");
  impl_->api->get(channel, namespace_name, pod_name, deadline, &out);
  return out;
}

}  // namespace vigil
