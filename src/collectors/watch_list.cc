// SPDX-License-Identifier: Apache-2.0
#include "collectors/watch_list.h"

namespace vigil {

void WatchList::Watch(int pid, const std::string& reason, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = entries_[pid];
  entry.pid = pid;
  entry.reason = reason;
  entry.last_seen_ns = now_ns;
}

void WatchList::Unwatch(int pid) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(pid);
}

std::vector<WatchList::Entry> WatchList::Snapshot(int64_t now_ns, int64_t ttl_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry> out;
  out.reserve(entries_.size());
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now_ns - it->second.last_seen_ns > ttl_ns) {
      it = entries_.erase(it);
      continue;
    }
    out.push_back(it->second);
    ++it;
  }
  return out;
}

}  // namespace vigil
