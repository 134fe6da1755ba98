// SPDX-License-Identifier: Apache-2.0
// What a collector is built from: where the host's pseudo-filesystems are, the daemon's shared
// services (borrowed, may be null), and the collector's own options struct, which only it reads.
// Each collector declares its options beside itself (ProcessCollectorOptions in
// process_collector.h, GpuCollectorOptions in gpu_collector.h, ...); the daemon fills them from
// its config and tests set only what they exercise. Options never set read as the struct's
// defaults, so a new collector's settings touch no other collector.
#pragma once

#include <any>
#include <map>
#include <memory>
#include <typeindex>
#include <utility>

#include "attribution/job_resolver.h"
#include "collectors/collector.h"
#include "collectors/watch_list.h"

namespace vigil {

class CollectorContext {
 public:
  HostPaths paths;
  std::shared_ptr<WatchList> watch_list;  // May be null.
  std::shared_ptr<JobResolver> resolver;  // May be null: no job labels then.

  // Sets the options struct of the collector that reads `Options`.
  template <typename Options>
  void SetOptions(Options options) {
    options_[std::type_index(typeid(Options))] = std::move(options);
  }

  // The options set for this type, or a default-constructed struct.
  template <typename Options>
  const Options& OptionsFor() const {
    static const Options kDefaults{};
    auto it = options_.find(std::type_index(typeid(Options)));
    const Options* set = it == options_.end() ? nullptr : std::any_cast<Options>(&it->second);
    return set ? *set : kDefaults;
  }

 private:
  std::map<std::type_index, std::any> options_;
};

}  // namespace vigil
