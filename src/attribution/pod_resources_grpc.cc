// SPDX-License-Identifier: Apache-2.0
// The gRPC half of PodResourcesClient, built as the plugin lib/vigil/kubelet_pod_resources.so
// (pod_resources_plugin.h): the channel, the calls with their deadlines and reply cap, and the
// conversion of protobuf messages into plain structs.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <utility>

#include "attribution/kubelet/podresources_v1.grpc.pb.h"
#include "attribution/pod_resources_plugin.h"

namespace vigil {
namespace {

Status FromGrpc(const grpc::Status& s, const std::string& what) {
  const std::string message = what + ": " + s.error_message();
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
      return OkStatus();
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return DeadlineExceededError(message);
    case grpc::StatusCode::UNIMPLEMENTED:
      return UnimplementedError(message);
    case grpc::StatusCode::NOT_FOUND:
      return NotFoundError(message);
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return PermissionDeniedError(message);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ResourceExhaustedError(message);
    case grpc::StatusCode::INVALID_ARGUMENT:
      return InvalidArgumentError(message);
    default:
      return UnavailableError(message);
  }
}

PodResources Convert(const v1::PodResources& pod) {
  PodResources out;
  out.name = pod.name();
  out.namespace_name = pod.namespace_();
  for (const v1::ContainerResources& c : pod.containers()) {
    PodContainer container;
    container.name = c.name();
    for (const v1::ContainerDevices& d : c.devices()) {
      container.devices.push_back(
          PodDevices{d.resource_name(), {d.device_ids().begin(), d.device_ids().end()}});
    }
    for (const v1::DynamicResource& dr : c.dynamic_resources()) {
      for (const v1::ClaimResource& claim : dr.claim_resources()) {
        for (const v1::CDIDevice& cdi : claim.cdi_devices()) {
          const std::string& name = cdi.name();
          const size_t eq = name.find('=');
          if (eq == std::string::npos || eq == 0 || eq + 1 == name.size()) {
            continue;  // Not a fully qualified CDI name.
          }
          container.devices.push_back(PodDevices{name.substr(0, eq), {name.substr(eq + 1)}});
        }
      }
    }
    out.containers.push_back(std::move(container));
  }
  return out;
}

void* Open(const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(PodResourcesClient::kMaxReplyBytes);
  args.SetMaxSendMessageSize(1 << 16);
  // Reconnect soon after the kubelet restarts (it recreates the socket) rather than backing
  // off for minutes: the deadline of each call bounds the wait anyway.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  return v1::PodResourcesLister::NewStub(
             grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(),
                                       args))
      .release();
}

void Close(void* channel) { delete static_cast<v1::PodResourcesLister::Stub*>(channel); }

void List(void* channel, const std::string& socket_path, std::chrono::milliseconds deadline,
          StatusOr<std::vector<PodResources>>* out) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status s =
      static_cast<v1::PodResourcesLister::Stub*>(channel)->List(&context, request, &response);
  if (!s.ok()) {
    *out = FromGrpc(s, "pod-resources List on " + socket_path);
    return;
  }
  std::vector<PodResources> pods;
  pods.reserve(static_cast<size_t>(response.pod_resources_size()));
  for (const v1::PodResources& pod : response.pod_resources()) {
    pods.push_back(Convert(pod));
  }
  *out = std::move(pods);
}

void Get(void* channel, const std::string& namespace_name, const std::string& pod_name,
         std::chrono::milliseconds deadline, StatusOr<PodResources>* out) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::GetPodResourcesRequest request;
  request.set_pod_name(pod_name);
  request.set_pod_namespace(namespace_name);
  v1::GetPodResourcesResponse response;
  grpc::Status s =
      static_cast<v1::PodResourcesLister::Stub*>(channel)->Get(&context, request, &response);
  if (!s.ok()) {
    *out = FromGrpc(s, "pod-resources Get " + namespace_name + "/" + pod_name);
    return;
  }
  *out = Convert(response.pod_resources());
}

constexpr PodResourcesPluginApi kApi = {Open, Close, List, Get};

}  // namespace
}  // namespace vigil

extern "C" __attribute__((visibility("default"))) const vigil::PodResourcesPluginApi*
vigil_pod_resources_v1() {
  return &vigil::kApi;
}
