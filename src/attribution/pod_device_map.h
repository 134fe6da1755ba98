// SPDX-License-Identifier: Apache-2.0
// Which pod and container holds which device, from the kubelet's pod-resources API, cached. The
// job resolver asks per GPU process; the kubelet is asked at most once per refresh interval with
// List (sooner only when a device is missing from the answer, and never more often than the
// minimum interval), and a process newly seen on a device has its pod's claim confirmed with the
// cheaper Get where the kubelet offers it. A missing socket or a failing kubelet leaves the last
// good answer in use for one stale period, then none, and health() says so. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "attribution/pod_resources_client.h"

namespace vigil {

struct PodDeviceOwner {
  std::string namespace_name;
  std::string pod;
  std::string container;
  std::string resource_name;  // "nvidia.com/gpu", ...
  bool operator==(const PodDeviceOwner&) const = default;
};

struct PodDeviceMapOptions {
  std::string socket_path = kDefaultKubeletPodResourcesSocket;
  int64_t call_deadline_ns = 2'000'000'000;  // Each List or Get.
  int64_t refresh_ns = 30'000'000'000;       // A full List at least this often while used.
  int64_t min_refresh_ns = 5'000'000'000;    // Never two Lists closer than this.
  int64_t stale_after_ns = 120'000'000'000;  // A last good answer older than this is dropped.
  std::function<int64_t()> monotonic_ns;     // Default: MonotonicNanos.
};

struct PodDeviceMapHealth {
  bool socket_present = false;
  bool ok = false;            // The last call succeeded.
  bool get_supported = true;  // False once the kubelet answered Get with UNIMPLEMENTED.
  size_t pods = 0;
  size_t devices = 0;
  std::string message;  // The last error; "" when ok.
};

class PodDeviceMap {
 public:
  explicit PodDeviceMap(PodDeviceMapOptions options);
  ~PodDeviceMap();
  PodDeviceMap(const PodDeviceMap&) = delete;
  PodDeviceMap& operator=(const PodDeviceMap&) = delete;

  // The holder of the first of `device_ids` that some pod holds (a GPU is named by its UUID and
  // by its index, as device plugins use either; a time-sliced replica "<uuid>::<n>" counts for
  // its GPU). A device several containers share has no single holder and is not found. `confirm`:
  // the caller sees this use for the first time, so a cached owner is confirmed with Get (or a
  // List) before it is believed.
  std::optional<PodDeviceOwner> Lookup(const std::vector<std::string>& device_ids, bool confirm);
  PodDeviceMapHealth health() const;
  const std::string& socket_path() const { return options_.socket_path; }

 private:
  int64_t Now() const;
  // Lists when due (or when `force` and the minimum interval has passed); true when it listed
  // successfully just now. Caller holds refresh_mu_.
  bool MaybeList(bool force);
  std::optional<PodDeviceOwner> Find(const std::vector<std::string>& device_ids) const;
  // Get of the owner's pod: true when it still holds one of `device_ids`.
  std::optional<bool> Confirm(const PodDeviceOwner& owner,
                              const std::vector<std::string>& device_ids);

  const PodDeviceMapOptions options_;
  PodResourcesClient client_;
  std::mutex refresh_mu_;  // One kubelet call at a time; held across the call.
  mutable std::mutex mu_;  // Guards the fields below (never held across a call).
  std::map<std::string, PodDeviceOwner> owners_;  // device id -> holder.
  size_t pods_ = 0;
  int64_t last_list_ns_ = 0;  // Attempt.
  int64_t last_good_ns_ = 0;  // Success.
  bool listed_ = false;
  PodDeviceMapHealth health_;
};

}  // namespace vigil
