// SPDX-License-Identifier: Apache-2.0
// The GPU collector's series carry the Kubernetes pod of the process holding the GPU: the real
// job resolver over a fixture process tree (tests/data/hosts/cg_k8s_slurm), a pod-resources
// server on a unix socket, and a scripted GPU backend.
#include <gtest/gtest.h>

#include "attribution/fake_pod_resources_server.h"
#include "attribution/job_resolver.h"
#include "attribution/scratch_dir.h"
#include "collectors/gpu_collector.h"
#include "collectors/gpu_metrics.h"

namespace vigil {
namespace {

const std::string kProc = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_k8s_slurm/proc";

class OneGpuBackend : public GpuBackend {
 public:
  std::string_view name() const override { return "scripted"; }
  Status Read(std::vector<GpuReading>* out) override {
    GpuReading r;
    r.index = 0;
    r.uuid = "GPU-aaaa";
    r.name = "NVIDIA H100 80GB HBM3";
    r.utilization_ratio = 1.0;
    r.processes_known = true;
    r.processes.push_back(
        {800, 4096, std::nullopt, std::nullopt, std::nullopt});  // trainer-0/main.
    r.processes.push_back(
        {903, 2048, std::nullopt, std::nullopt, std::nullopt});  // A Slurm job's process.
    *out = {r};
    return OkStatus();
  }
  std::string Describe() const override { return "scripted"; }
};

std::vector<const Sample*> FindAll(const MetricBatch& batch, std::string_view name,
                                   std::string_view job_id) {
  std::vector<const Sample*> out;
  for (const Sample& s : batch.samples) {
    if (s.desc->name == name && LabelValue(s.labels, "job_id") == job_id) out.push_back(&s);
  }
  return out;
}

TEST(GpuCollectorK8sTest, PodNamespacePodAndContainerLabelTheGpuSeriesOfAPodsProcess) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->SetPods({{"trainer-0", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-aaaa"}}}}}}});
  JobResolverOptions options;
  options.proc_root = kProc;
  options.kubelet.socket_path = dir.Sub("kubelet.sock");
  options.kubelet.call_deadline_ns = 10'000'000'000;
  options.slurm.scontrol = "";
  auto resolver = std::make_shared<JobResolver>(options);
  GpuCollectorConfig config;
  config.make_backend = []() -> StatusOr<std::unique_ptr<GpuBackend>> {
    return std::unique_ptr<GpuBackend>(std::make_unique<OneGpuBackend>());
  };
  config.resolve_on_device = [resolver](int pid, const std::vector<std::string>& devices) {
    return resolver->ResolveOnDevice(pid, devices);
  };
  int64_t now = 1'000'000'000'000;
  config.monotonic_ns = [&now] { return now; };
  config.unix_ns = [&now] { return now; };
  GpuCollector collector(std::move(config));

  MetricBatch batch;
  for (int tick = 0; tick < 2; ++tick) {
    batch = MetricBatch{};
    MetricWriter writer(&batch);
    ASSERT_TRUE(collector.Collect(writer).ok());
    now += 10'000'000'000;
  }

  const std::string pod_uid = "11111111-2222-3333-4444-555555555555";
  for (std::string_view name : {gpu_metrics::kProcessMemory.name, gpu_metrics::kAllocated.name}) {
    SCOPED_TRACE(name);
    std::vector<const Sample*> pod = FindAll(batch, name, pod_uid);
    ASSERT_EQ(pod.size(), 1u);
    EXPECT_EQ(LabelValue(pod[0]->labels, "k8s_namespace"), "ml");
    EXPECT_EQ(LabelValue(pod[0]->labels, "k8s_pod"), "trainer-0");
    EXPECT_EQ(LabelValue(pod[0]->labels, "k8s_container"), "main");
    std::vector<const Sample*> slurm = FindAll(batch, name, "4500");
    ASSERT_EQ(slurm.size(), 1u);
    for (const auto& [key, value] : slurm[0]->labels) {
      EXPECT_FALSE(key.starts_with("k8s_")) << key << "=" << value;  // No pod, no pod labels.
    }
  }
  // The two jobs share the GPU for the 10 s between the ticks: their seconds add up to those 10.
  EXPECT_DOUBLE_EQ(FindAll(batch, gpu_metrics::kAllocated.name, pod_uid)[0]->value +
                       FindAll(batch, gpu_metrics::kAllocated.name, "4500")[0]->value,
                   10.0);
}

}  // namespace
}  // namespace vigil
