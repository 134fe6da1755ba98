// SPDX-License-Identifier: Apache-2.0
// ProcessRegistry's claim verification: which pids a datagram's sender may claim, checked against
// its SCM_CREDENTIALS and its ancestry in <proc>/<pid>/status (see process_registry.h).
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "ipc/process_registry.h"

namespace vigil {
namespace {

constexpr int kMaxChainDepth = 64;

}  // namespace

StatusOr<ProcStatusIds> ParseProcStatusIds(std::string_view status_text) {
  ProcStatusIds ids;
  bool have_ppid = false;
  std::string_view line;
  while (NextLine(&status_text, &line)) {
    if (line.starts_with("NSpid:")) {
      for (std::string_view field : SplitWhitespace(line.substr(6))) {
        auto v = ParseInt64(field);
        if (!v || *v <= 0) {
          return InvalidArgumentError("bad NSpid line in status");
        }
        ids.ns_pids.push_back(static_cast<int32_t>(*v));
      }
    } else if (line.starts_with("PPid:")) {
      auto v = ParseInt64(Trim(line.substr(5)));
      if (!v || *v < 0) {
        return InvalidArgumentError("bad PPid line in status");
      }
      ids.ppid = static_cast<int32_t>(*v);
      have_ppid = true;
    }
  }
  if (!have_ppid) {
    return InvalidArgumentError("status has no PPid line");
  }
  return ids;
}
StatusOr<ProcessRegistry::Claim> ProcessRegistry::VerifyClaim(const PeerCredentials& cred,
                                                              const std::vector<int32_t>& pids) {
  if (pids.empty()) {
    return InvalidArgumentError("claim has no pid");
  }
  if (!options_.verify_credentials) {
    return Claim{pids, pids};
  }
  if (cred.pid <= 0) {
    return PermissionDeniedError("datagram carried no sender credentials");
  }
  const int64_t now = clock_();
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = claim_cache_.find(cred.pid);
    if (it != claim_cache_.end() && it->second.claimed == pids &&
        now - it->second.verified_ns < options_.claim_cache_ns) {
      return it->second.claim;
    }
  }
  auto claim = VerifyUncached(cred, pids);
  if (claim.ok()) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (claim_cache_.size() >= 2 * options_.max_processes) {
      claim_cache_.clear();
    }
    claim_cache_[cred.pid] = CachedClaim{pids, *claim, now};
  }
  return claim;
}

StatusOr<ProcessRegistry::Claim> ProcessRegistry::VerifyUncached(const PeerCredentials& cred,
                                                                 const std::vector<int32_t>& pids) {
  // Walk the sender's ancestry in the daemon's namespace, noting each pid as the sender's
  // namespace sees it (NSpid at the sender's depth).
  std::vector<std::pair<int32_t, int32_t>> chain;  // (host pid, pid in the sender's namespace)
  size_t depth = 0;
  int32_t host = cred.pid;
  for (int i = 0; i < kMaxChainDepth && host > 0; ++i) {
    auto text =
        ReadSmallFile(JoinPath(options_.proc_root, fmt::format("{}/status", host)), 64 << 10);
    if (!text.ok()) {
      break;
    }
    auto ids = ParseProcStatusIds(*text);
    if (!ids.ok()) {
      break;
    }
    if (ids->ns_pids.empty()) {
      ids->ns_pids.push_back(host);  // Kernels before 4.1 have no NSpid: one namespace.
    }
    if (i == 0) {
      depth = ids->ns_pids.size();
    }
    if (ids->ns_pids.size() < depth) {
      break;  // Above the sender's namespace: invisible to it.
    }
    chain.emplace_back(host, ids->ns_pids[depth - 1]);
    host = ids->ppid;
  }
  Claim claim;
  if (chain.empty()) {
    // The process is unreadable (gone, or another proc tree): trust only what the kernel said.
    if (pids[0] != cred.pid) {
      return PermissionDeniedError(fmt::format(
          "claimed pid {} but the kernel says the sender is pid {}", pids[0], cred.pid));
    }
    claim.pids = {pids[0]};
    claim.host_pids = {cred.pid};
    counters_.dropped_ancestors += pids.size() - 1;
    return claim;
  }
  if (pids[0] != chain[0].second && pids[0] != chain[0].first) {
    return PermissionDeniedError(
        fmt::format("claimed pid {} but the sender is pid {} (pid {} in its namespace)", pids[0],
                    chain[0].first, chain[0].second));
  }
  claim.pids.push_back(pids[0]);
  claim.host_pids.push_back(chain[0].first);
  for (size_t i = 1; i < pids.size(); ++i) {
    auto it = std::find_if(chain.begin() + 1, chain.end(),
                           [&](const auto& link) { return link.second == pids[i]; });
    if (it == chain.end()) {
      ++counters_.dropped_ancestors;  // Not an ancestor: never let it widen the match.
      continue;
    }
    claim.pids.push_back(pids[i]);
    claim.host_pids.push_back(it->first);
  }
  return claim;
}

}  // namespace vigil
