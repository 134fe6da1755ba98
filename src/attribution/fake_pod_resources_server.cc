// SPDX-License-Identifier: Apache-2.0
#include "attribution/fake_pod_resources_server.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "attribution/kubelet/podresources_v1.grpc.pb.h"

namespace vigil {

struct FakePodResourcesServer::State {
  std::mutex mu;
  std::vector<PodResources> pods;
  bool get_implemented = true;
  std::chrono::milliseconds delay{0};
  std::atomic<int> list_calls{0};
  std::atomic<int> get_calls{0};
};

namespace {

void ToProto(const PodResources& pod, v1::PodResources* out) {
  out->set_name(pod.name);
  out->set_namespace_(pod.namespace_name);
  for (const PodContainer& c : pod.containers) {
    v1::ContainerResources* container = out->add_containers();
    container->set_name(c.name);
    for (const PodDevices& d : c.devices) {
      v1::ContainerDevices* devices = container->add_devices();
      devices->set_resource_name(d.resource_name);
      for (const std::string& id : d.device_ids) devices->add_device_ids(id);
    }
  }
}

class Service final : public v1::PodResourcesLister::Service {
 public:
  explicit Service(std::shared_ptr<FakePodResourcesServer::State> state)
      : state_(std::move(state)) {}

  grpc::Status List(grpc::ServerContext* /*context*/, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    ++state_->list_calls;
    std::vector<PodResources> pods;
    std::chrono::milliseconds delay;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      pods = state_->pods;
      delay = state_->delay;
    }
    std::this_thread::sleep_for(delay);  // A stalled kubelet, on purpose.
    for (const PodResources& pod : pods) ToProto(pod, response->add_pod_resources());
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext* /*context*/, const v1::GetPodResourcesRequest* request,
                   v1::GetPodResourcesResponse* response) override {
    ++state_->get_calls;
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->get_implemented) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "PodResources API Get is disabled");
    }
    for (const PodResources& pod : state_->pods) {
      if (pod.name == request->pod_name() && pod.namespace_name == request->pod_namespace()) {
        ToProto(pod, response->mutable_pod_resources());
        return grpc::Status::OK;
      }
    }
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "pod " + request->pod_namespace() + "/" +
                                                         request->pod_name() + " not found");
  }

 private:
  std::shared_ptr<FakePodResourcesServer::State> state_;
};

}  // namespace

struct FakePodResourcesServer::Server {
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
};

StatusOr<std::unique_ptr<FakePodResourcesServer>> FakePodResourcesServer::Start(
    const std::string& socket_path) {
  std::unique_ptr<FakePodResourcesServer> fake(new FakePodResourcesServer());
  fake->socket_path_ = socket_path;
  fake->state_ = std::make_shared<State>();
  fake->server_ = std::make_unique<Server>();
  fake->server_->service = std::make_unique<Service>(fake->state_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials());
  builder.RegisterService(fake->server_->service.get());
  fake->server_->server = builder.BuildAndStart();
  if (!fake->server_->server) {
    return UnavailableError("cannot serve pod-resources on " + socket_path);
  }
  return fake;
}

FakePodResourcesServer::~FakePodResourcesServer() {
  if (server_ && server_->server) {
    server_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server_->server->Wait();
  }
  unlink(socket_path_.c_str());
}

void FakePodResourcesServer::SetPods(std::vector<PodResources> pods) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->pods = std::move(pods);
}

void FakePodResourcesServer::SetGetImplemented(bool implemented) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->get_implemented = implemented;
}

void FakePodResourcesServer::SetReplyDelay(std::chrono::milliseconds delay) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->delay = delay;
}

int FakePodResourcesServer::list_calls() const { return state_->list_calls.load(); }
int FakePodResourcesServer::get_calls() const { return state_->get_calls.load(); }

}  // namespace vigil
