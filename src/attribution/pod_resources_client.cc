// SPDX-License-Identifier: Apache-2.0
#include "attribution/pod_resources_client.h"

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <utility>

#include "attribution/kubelet/podresources_v1.grpc.pb.h"

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

}  // namespace

struct PodResourcesClient::Impl {
  std::mutex mu;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;  // Made on first use; guarded by mu.

  v1::PodResourcesLister::Stub* Stub(const std::string& socket_path) {
    std::lock_guard<std::mutex> lock(mu);
    if (!stub) {
      grpc::ChannelArguments args;
      args.SetMaxReceiveMessageSize(kMaxReplyBytes);
      args.SetMaxSendMessageSize(1 << 16);
      // Reconnect soon after the kubelet restarts (it recreates the socket) rather than backing
      // off for minutes: the deadline of each call bounds the wait anyway.
      args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
      stub = v1::PodResourcesLister::NewStub(grpc::CreateCustomChannel(
          "unix:" + socket_path, grpc::InsecureChannelCredentials(), args));
    }
    return stub.get();
  }
};

// The channel (and gRPC's threads) only once the kubelet is first asked: hosts without
// Kubernetes never start them.
PodResourcesClient::PodResourcesClient(std::string socket_path)
    : socket_path_(std::move(socket_path)), impl_(std::make_unique<Impl>()) {}

PodResourcesClient::~PodResourcesClient() = default;

StatusOr<std::vector<PodResources>> PodResourcesClient::List(std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  grpc::Status s = impl_->Stub(socket_path_)->List(&context, request, &response);
  if (!s.ok()) {
    return FromGrpc(s, "pod-resources List on " + socket_path_);
  }
  std::vector<PodResources> out;
  out.reserve(static_cast<size_t>(response.pod_resources_size()));
  for (const v1::PodResources& pod : response.pod_resources()) {
    out.push_back(Convert(pod));
  }
  return out;
}

StatusOr<PodResources> PodResourcesClient::Get(const std::string& namespace_name,
                                               const std::string& pod_name,
                                               std::chrono::milliseconds deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::GetPodResourcesRequest request;
  request.set_pod_name(pod_name);
  request.set_pod_namespace(namespace_name);
  v1::GetPodResourcesResponse response;
  grpc::Status s = impl_->Stub(socket_path_)->Get(&context, request, &response);
  if (!s.ok()) {
    return FromGrpc(s, "pod-resources Get " + namespace_name + "/" + pod_name);
  }
  return Convert(response.pod_resources());
}

}  // namespace vigil
