// SPDX-License-Identifier: Apache-2.0
// Kubernetes pod identity end to end: a fixture process tree (tests/data/hosts/cg_k8s_slurm) and a
// pod-resources server on a unix socket, as the kubelet serves it.
#include <gtest/gtest.h>

#include "attribution/fake_pod_resources_server.h"
#include "attribution/job_resolver.h"
#include "attribution/scratch_dir.h"

namespace vigil {
namespace {

const std::string kProc = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/cg_k8s_slurm/proc";
constexpr char kPodUid[] = "11111111-2222-3333-4444-555555555555";
// The container ids in the fixture's cgroup paths.
constexpr char kMainId[] = "4f1c2b9e8d7a6c5b4a3928171615141312111009080706050403020100aabbcc";
constexpr char kSidecarId[] = "9e8d7a6c5b4a39281716151413121110090807060504030201000a0b0c0d0e0f";

JobResolverOptions Options(const std::string& socket) {
  JobResolverOptions options;
  options.proc_root = kProc;
  options.kubelet.socket_path = socket;
  options.kubelet.call_deadline_ns = 10'000'000'000;
  return options;
}

bool Mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& line : lines) {
    if (line.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(JobResolverK8sTest, WithoutTheKubeletCgroupPathsGivePodUidAndContainerId) {
  ScratchDir dir;
  JobResolver resolver(Options(dir.Sub("kubelet.sock")));  // Nothing listens there.

  StatusOr<JobInfo> systemd = resolver.ResolveOnDevice(800, {"GPU-aaaa", "0"});
  StatusOr<JobInfo> cgroupfs = resolver.Resolve(810);
  StatusOr<JobInfo> crio = resolver.Resolve(820);

  ASSERT_TRUE(systemd.ok() && cgroupfs.ok() && crio.ok());
  EXPECT_EQ(systemd->job_id, kPodUid);
  EXPECT_EQ(systemd->rule, "k8s_pod");
  EXPECT_EQ(systemd->k8s_namespace, "");
  EXPECT_EQ(systemd->k8s_pod, kPodUid);
  EXPECT_EQ(systemd->k8s_container, kMainId);
  EXPECT_EQ(cgroupfs->k8s_pod, "66666666-7777-8888-9999-000000000000");
  EXPECT_EQ(cgroupfs->k8s_container,
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  EXPECT_EQ(crio->k8s_pod, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
  EXPECT_EQ(crio->k8s_container,
            "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
  // A pod was seen and the kubelet could not be asked: `vigil status` says so, and where.
  EXPECT_TRUE(Mentions(resolver.Degradations(), dir.Sub("kubelet.sock")));
}

TEST(JobResolverK8sTest, TheKubeletNamesTheGpuProcessAndWhatItLearnsNamesItsPod) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->SetPods(
      {{"trainer-0", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-aaaa"}}}}, {"sidecar", {}}}},
       {"notebook", "research", {{"jupyter", {{"nvidia.com/gpu", {"1"}}}}}}});
  JobResolver resolver(Options(dir.Sub("kubelet.sock")));

  StatusOr<JobInfo> gpu = resolver.ResolveOnDevice(800, {"GPU-aaaa", "0"});
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(gpu->job_id, kPodUid);  // The job stays the pod UID.
  EXPECT_EQ(gpu->k8s_namespace, "ml");
  EXPECT_EQ(gpu->k8s_pod, "trainer-0");
  EXPECT_EQ(gpu->k8s_container, "main");

  // The sidecar holds no GPU: its pod is named from what the GPU process taught, its container
  // stays the runtime's id.
  StatusOr<JobInfo> sidecar = resolver.Resolve(801);
  ASSERT_TRUE(sidecar.ok());
  EXPECT_EQ(sidecar->k8s_namespace, "ml");
  EXPECT_EQ(sidecar->k8s_pod, "trainer-0");
  EXPECT_EQ(sidecar->k8s_container, kSidecarId);
  // And the GPU process itself, asked again without a device (the process collector's way).
  EXPECT_EQ(resolver.Resolve(800)->k8s_container, "main");

  // A device plugin that names GPUs by index.
  StatusOr<JobInfo> indexed = resolver.ResolveOnDevice(810, {"GPU-bbbb", "1"});
  ASSERT_TRUE(indexed.ok());
  EXPECT_EQ(indexed->k8s_namespace, "research");
  EXPECT_EQ(indexed->k8s_pod, "notebook");
  EXPECT_EQ(indexed->k8s_container, "jupyter");

  EXPECT_TRUE(resolver.Degradations().empty());
  EXPECT_EQ((*server)->list_calls(), 1);  // One List served all of it.
}

TEST(JobResolverK8sTest, ASlurmJobsGpuIsNotNamedByAPod) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok());
  (*server)->SetPods({{"trainer-0", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-aaaa"}}}}}}});
  JobResolverOptions options = Options(dir.Sub("kubelet.sock"));
  options.slurm.scontrol = "";
  JobResolver resolver(options);

  StatusOr<JobInfo> slurm = resolver.ResolveOnDevice(903, {"GPU-aaaa", "0"});

  ASSERT_TRUE(slurm.ok());
  EXPECT_EQ(slurm->job_id, "4500");
  EXPECT_EQ(slurm->k8s_pod, "");
  EXPECT_EQ((*server)->list_calls(), 0);
}

TEST(JobResolverK8sTest, OffMeansNoKubeletCallsAndSaysSoOncePodsAreSeen) {
  JobResolverOptions options = Options("");
  options.kubelet_configured = true;
  JobResolver resolver(options);

  StatusOr<JobInfo> info = resolver.ResolveOnDevice(800, {"GPU-aaaa"});

  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->k8s_pod, kPodUid);
  EXPECT_TRUE(Mentions(resolver.Degradations(), "kubelet lookups are off"));
}

TEST(JobResolverK8sTest, AHostWithoutPodsOrKubeletSaysNothing) {
  ScratchDir dir;
  JobResolverOptions options = Options(dir.Sub("kubelet.sock"));
  options.slurm.scontrol = "";
  JobResolver resolver(options);

  ASSERT_TRUE(resolver.ResolveOnDevice(903, {"GPU-aaaa"}).ok());

  EXPECT_TRUE(resolver.Degradations().empty());
}

}  // namespace
}  // namespace vigil
