// SPDX-License-Identifier: Apache-2.0
// Processes of interest: the daemon's other parts (GPU collectors, the IPC registry) add pids with
// a reason; the process collector reports on these plus those matching configured patterns.
// Thread-safe; entries expire when the process is gone or after `ttl` without a refresh.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace vigil {

class WatchList {
 public:
  struct Entry {
    int pid = 0;
    std::string reason;  // "gpu", "ipc", "pattern"
    int64_t last_seen_ns = 0;
  };

  // Adds or refreshes `pid`.
  void Watch(int pid, const std::string& reason, int64_t now_ns);
  void Unwatch(int pid);
  // Entries refreshed within `ttl_ns` of `now_ns`; older ones are dropped.
  std::vector<Entry> Snapshot(int64_t now_ns, int64_t ttl_ns);

 private:
  std::mutex mu_;
  std::map<int, Entry> entries_;
};

}  // namespace vigil
