// SPDX-License-Identifier: Apache-2.0
#include "attribution/pod_device_map.h"

#include <chrono>
#include <set>
#include <utility>

#include "base/file_util.h"
#include "base/time_util.h"

namespace vigil {
namespace {

std::chrono::milliseconds Millis(int64_t ns) {
  return std::chrono::milliseconds(std::max<int64_t>(1, ns / 1'000'000));
}

}  // namespace

PodDeviceMap::PodDeviceMap(PodDeviceMapOptions options)
    : options_(std::move(options)), client_(options_.socket_path) {}

PodDeviceMap::~PodDeviceMap() = default;

int64_t PodDeviceMap::Now() const {
  return options_.monotonic_ns ? options_.monotonic_ns() : MonotonicNanos();
}

bool PodDeviceMap::MaybeList(bool force) {
  const int64_t now = Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t since = now - last_list_ns_;
    const bool due = !listed_ || since >= options_.refresh_ns;
    if (!due && !(force && since >= options_.min_refresh_ns)) {
      return false;
    }
    listed_ = true;
    last_list_ns_ = now;
  }
  const bool present = PathExists(options_.socket_path);
  StatusOr<std::vector<PodResources>> pods =
      present ? client_.List(Millis(options_.call_deadline_ns))
              : StatusOr<std::vector<PodResources>>(
                    NotFoundError("no kubelet pod-resources socket at " + options_.socket_path));
  std::lock_guard<std::mutex> lock(mu_);
  health_.socket_present = present;
  if (!pods.ok()) {
    health_.ok = false;
    health_.message = pods.status().ToString();
    if (now - last_good_ns_ >= options_.stale_after_ns) {
      owners_.clear();  // Too old to trust: pods come and go.
      pods_ = 0;
    }
  } else {
    owners_.clear();
    std::set<std::string> shared;  // Devices more than one container holds: no single owner.
    auto add = [&](const std::string& id, const PodDeviceOwner& owner) {
      auto [it, inserted] = owners_.emplace(id, owner);
      if (!inserted && !(it->second == owner)) shared.insert(id);
    };
    for (const PodResources& pod : *pods) {
      for (const PodContainer& c : pod.containers) {
        for (const PodDevices& d : c.devices) {
          for (const std::string& id : d.device_ids) {
            const PodDeviceOwner owner{pod.namespace_name, pod.name, c.name, d.resource_name};
            add(id, owner);
            // Time-sliced GPUs are advertised as replicas "<uuid>::<n>"; the GPU is the uuid.
            if (const size_t sep = id.find("::"); sep != std::string::npos && sep > 0) {
              add(id.substr(0, sep), owner);
            }
          }
        }
      }
    }
    for (const std::string& id : shared) owners_.erase(id);
    pods_ = pods->size();
    last_good_ns_ = now;
    health_.ok = true;
    health_.message.clear();
  }
  health_.pods = pods_;
  health_.devices = owners_.size();
  return pods.ok();
}

std::optional<PodDeviceOwner> PodDeviceMap::Find(const std::vector<std::string>& ids) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& id : ids) {
    auto it = owners_.find(id);
    if (it != owners_.end()) {
      return it->second;
    }
  }
  return std::nullopt;
}

std::optional<bool> PodDeviceMap::Confirm(const PodDeviceOwner& owner,
                                          const std::vector<std::string>& ids) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!health_.get_supported) {
      return std::nullopt;
    }
  }
  StatusOr<PodResources> pod =
      client_.Get(owner.namespace_name, owner.pod, Millis(options_.call_deadline_ns));
  if (!pod.ok()) {
    if (pod.status().code() == StatusCode::kUnimplemented) {
      std::lock_guard<std::mutex> lock(mu_);
      health_.get_supported = false;
      return std::nullopt;
    }
    if (pod.status().code() == StatusCode::kNotFound) {
      return false;  // The pod is gone.
    }
    return std::nullopt;  // Unknown: let a List decide.
  }
  for (const PodContainer& c : pod->containers) {
    for (const PodDevices& d : c.devices) {
      for (const std::string& id : d.device_ids) {
        for (const std::string& want : ids) {
          if (id == want && c.name == owner.container) {
            return true;
          }
        }
      }
    }
  }
  return false;
}

std::optional<PodDeviceOwner> PodDeviceMap::Lookup(const std::vector<std::string>& device_ids,
                                                   bool confirm) {
  std::lock_guard<std::mutex> refresh(refresh_mu_);
  const bool fresh = MaybeList(/*force=*/false);
  std::optional<PodDeviceOwner> owner = Find(device_ids);
  if (fresh) {
    return owner;  // Just listed: nothing newer to ask for.
  }
  if (owner && confirm) {
    std::optional<bool> holds = Confirm(*owner, device_ids);
    if (holds.value_or(false)) {
      return owner;
    }
    MaybeList(/*force=*/true);  // Get said no, or cannot say: ask for the whole picture.
    return Find(device_ids);
  }
  if (!owner) {
    MaybeList(/*force=*/true);  // A pod newer than the last List.
    owner = Find(device_ids);
  }
  return owner;
}

PodDeviceMapHealth PodDeviceMap::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}

}  // namespace vigil
