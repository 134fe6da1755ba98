// SPDX-License-Identifier: Apache-2.0
#include "attribution/pod_resources_client.h"

#include <gtest/gtest.h>

#include "attribution/fake_pod_resources_server.h"
#include "attribution/scratch_dir.h"
#include "base/time_util.h"

namespace vigil {
namespace {

using std::chrono::milliseconds;

std::vector<PodResources> TwoPods() {
  return {
      {"trainer-0",
       "ml",
       {{"main", {{"nvidia.com/gpu", {"GPU-11111111-aaaa", "GPU-22222222-bbbb"}}}},
        {"sidecar", {}}}},
      {"notebook", "research", {{"jupyter", {{"nvidia.com/gpu", {"MIG-33333333-cccc"}}}}}},
  };
}

TEST(PodResourcesClientTest, ListReturnsEveryPodWithItsContainersDevices) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->SetPods(TwoPods());
  PodResourcesClient client(dir.Sub("kubelet.sock"));

  StatusOr<std::vector<PodResources>> pods = client.List(milliseconds(10000));

  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  EXPECT_EQ(*pods, TwoPods());  // Field by field through the wire and back.
  EXPECT_EQ((*server)->list_calls(), 1);
}

TEST(PodResourcesClientTest, GetReturnsOnePodOrNotFound) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok());
  (*server)->SetPods(TwoPods());
  PodResourcesClient client(dir.Sub("kubelet.sock"));

  StatusOr<PodResources> pod = client.Get("research", "notebook", milliseconds(10000));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ(*pod, TwoPods()[1]);

  StatusOr<PodResources> gone = client.Get("ml", "notebook", milliseconds(10000));
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
}

TEST(PodResourcesClientTest, GetOfAKubeletWithoutItIsUnimplemented) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok());
  (*server)->SetPods(TwoPods());
  (*server)->SetGetImplemented(false);
  PodResourcesClient client(dir.Sub("kubelet.sock"));

  EXPECT_EQ(client.Get("ml", "trainer-0", milliseconds(10000)).status().code(),
            StatusCode::kUnimplemented);
}

TEST(PodResourcesClientTest, AStalledKubeletCostsNoMoreThanTheDeadline) {
  ScratchDir dir;
  auto server = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
  ASSERT_TRUE(server.ok());
  (*server)->SetPods(TwoPods());
  (*server)->SetReplyDelay(milliseconds(3000));
  PodResourcesClient client(dir.Sub("kubelet.sock"));

  const int64_t start = MonotonicNanos();
  StatusOr<std::vector<PodResources>> pods = client.List(milliseconds(300));
  const double elapsed_s = static_cast<double>(MonotonicNanos() - start) / 1e9;

  EXPECT_EQ(pods.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(elapsed_s, 2.5);  // The 3 s stall is not waited out.
}

TEST(PodResourcesClientTest, NoSocketIsUnavailableWithinTheDeadline) {
  ScratchDir dir;
  PodResourcesClient client(dir.Sub("absent.sock"));

  StatusOr<std::vector<PodResources>> pods = client.List(milliseconds(500));

  EXPECT_FALSE(pods.ok());
  EXPECT_TRUE(pods.status().code() == StatusCode::kUnavailable ||
              pods.status().code() == StatusCode::kDeadlineExceeded)
      << pods.status().ToString();
  EXPECT_NE(pods.status().message().find(dir.Sub("absent.sock")), std::string::npos);
}

}  // namespace
}  // namespace vigil
