// SPDX-License-Identifier: Apache-2.0
#include "attribution/pod_device_map.h"

#include <gtest/gtest.h>

#include "attribution/fake_pod_resources_server.h"
#include "attribution/scratch_dir.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;

PodResources Trainer(const std::string& gpu) {
  return {"trainer-0", "ml", {{"main", {{"nvidia.com/gpu", {gpu}}}}}};
}

struct Harness {
  ScratchDir dir;
  std::unique_ptr<FakePodResourcesServer> server;
  int64_t now = 1000 * kSec;
  std::unique_ptr<PodDeviceMap> map;

  explicit Harness(bool serve = true) {
    if (serve) {
      auto started = FakePodResourcesServer::Start(dir.Sub("kubelet.sock"));
      EXPECT_TRUE(started.ok()) << started.status().ToString();
      if (started.ok()) server = std::move(*started);
    }
    PodDeviceMapOptions options;
    options.socket_path = dir.Sub("kubelet.sock");
    options.call_deadline_ns = 10 * kSec;
    options.monotonic_ns = [this] { return now; };
    map = std::make_unique<PodDeviceMap>(options);
  }
};

TEST(PodDeviceMapTest, AGpuIsFoundByUuidOrIndexAndTheKubeletIsAskedOncePerInterval) {
  Harness h;
  ASSERT_TRUE(h.server);
  h.server->SetPods(
      {Trainer("GPU-aaaa"), {"indexed", "batch", {{"w", {{"nvidia.com/gpu", {"3"}}}}}}});

  std::optional<PodDeviceOwner> a = h.map->Lookup({"GPU-aaaa", "0"}, false);
  std::optional<PodDeviceOwner> b = h.map->Lookup({"GPU-dddd", "3"}, false);
  for (int i = 0; i < 10; ++i) h.map->Lookup({"GPU-aaaa", "0"}, false);

  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, (PodDeviceOwner{"ml", "trainer-0", "main", "nvidia.com/gpu"}));
  EXPECT_EQ(*b, (PodDeviceOwner{"batch", "indexed", "w", "nvidia.com/gpu"}));
  EXPECT_EQ(h.server->list_calls(), 1);
  EXPECT_EQ(h.map->health().pods, 2u);
  EXPECT_TRUE(h.map->health().ok);

  h.now += 31 * kSec;  // Past the 30 s refresh interval.
  h.map->Lookup({"GPU-aaaa", "0"}, false);
  EXPECT_EQ(h.server->list_calls(), 2);
}

TEST(PodDeviceMapTest, AnUnknownDeviceListsEarlyButNeverFasterThanTheMinimumInterval) {
  Harness h;
  ASSERT_TRUE(h.server);
  h.server->SetPods({Trainer("GPU-aaaa")});
  h.map->Lookup({"GPU-aaaa"}, false);
  h.server->SetPods(
      {Trainer("GPU-aaaa"), {"late", "ml", {{"c", {{"nvidia.com/gpu", {"GPU-bbbb"}}}}}}});

  EXPECT_FALSE(h.map->Lookup({"GPU-bbbb"}, false));  // 0 s since the last List: not yet.
  h.now += 6 * kSec;
  std::optional<PodDeviceOwner> late = h.map->Lookup({"GPU-bbbb"}, false);
  for (int i = 0; i < 5; ++i) h.map->Lookup({"GPU-zzzz"}, false);  // Misses within 5 s.

  ASSERT_TRUE(late);
  EXPECT_EQ(late->pod, "late");
  EXPECT_EQ(h.server->list_calls(), 2);
}

TEST(PodDeviceMapTest, ANewProcessConfirmsItsPodWithGetAndAMovedGpuIsListedAfresh) {
  Harness h;
  ASSERT_TRUE(h.server);
  h.server->SetPods({Trainer("GPU-aaaa")});
  h.map->Lookup({"GPU-aaaa"}, false);
  h.now += 6 * kSec;

  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, true)->pod, "trainer-0");
  EXPECT_EQ(h.server->get_calls(), 1);
  EXPECT_EQ(h.server->list_calls(), 1);  // Get said yes: no List.

  // The GPU now belongs to another pod; the cached answer still names trainer-0.
  h.server->SetPods({{"trainer-1", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-aaaa"}}}}}}});
  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, false)->pod, "trainer-0");  // Not confirmed: cached.
  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, true)->pod, "trainer-1");   // Get: gone; List.
  EXPECT_EQ(h.server->list_calls(), 2);
}

TEST(PodDeviceMapTest, AKubeletWithoutGetIsAskedWithListAndNotAskedForGetAgain) {
  Harness h;
  ASSERT_TRUE(h.server);
  h.server->SetPods({Trainer("GPU-aaaa")});
  h.server->SetGetImplemented(false);
  h.map->Lookup({"GPU-aaaa"}, false);
  h.now += 6 * kSec;

  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, true)->pod, "trainer-0");
  h.now += 6 * kSec;
  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, true)->pod, "trainer-0");

  EXPECT_EQ(h.server->get_calls(), 1);
  EXPECT_FALSE(h.map->health().get_supported);
  EXPECT_EQ(h.server->list_calls(), 3);
}

TEST(PodDeviceMapTest, NoSocketFindsNothingAndSaysWhere) {
  Harness h(/*serve=*/false);

  EXPECT_FALSE(h.map->Lookup({"GPU-aaaa"}, true));

  const PodDeviceMapHealth health = h.map->health();
  EXPECT_FALSE(health.socket_present);
  EXPECT_FALSE(health.ok);
  EXPECT_NE(health.message.find(h.dir.Sub("kubelet.sock")), std::string::npos) << health.message;
}

TEST(PodDeviceMapTest, ADeadKubeletKeepsTheLastAnswerUntilItIsStale) {
  Harness h;
  ASSERT_TRUE(h.server);
  h.server->SetPods({Trainer("GPU-aaaa")});
  ASSERT_TRUE(h.map->Lookup({"GPU-aaaa"}, false));
  h.server.reset();  // The kubelet goes away (its socket with it).

  h.now += 31 * kSec;
  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, false)->pod, "trainer-0");  // Last good answer.
  EXPECT_FALSE(h.map->health().ok);

  h.now += 120 * kSec;
  EXPECT_FALSE(h.map->Lookup({"GPU-aaaa"}, false));  // Too old to trust.
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(PodDeviceMapTest, ATimeSlicedGpuHasAnOwnerOnlyWhileOneContainerHoldsItsReplicas) {
  Harness h;
  ASSERT_TRUE(h.server);
  h.server->SetPods({{"a", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-aaaa::0", "GPU-aaaa::1"}}}}}},
                     {"b", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-bbbb::0"}}}}}},
                     {"c", "ml", {{"main", {{"nvidia.com/gpu", {"GPU-bbbb::1"}}}}}}});

  EXPECT_EQ(h.map->Lookup({"GPU-aaaa"}, false)->pod, "a");
  h.now += 6 * kSec;
  EXPECT_FALSE(h.map->Lookup({"GPU-bbbb"}, false));  // Shared by b and c.
}

}  // namespace
}  // namespace vigil
