// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_mdstat_collector.h"

#include <algorithm>
#include <utility>

#include "base/file_util.h"
#include "base/strings.h"
#include "collectors/collector_context.h"
#include "collectors/proc_parse.h"

namespace vigil {
namespace {

constexpr MetricDesc kState{"vigil_host_md_state",
                            "1 for the array's state (label state), 0 for the other states.",
                            MetricKind::kGauge, ""};
constexpr MetricDesc kDisks{"vigil_host_md_disks",
                            "Member disks by state: active, failed, spare, down.",
                            MetricKind::kGauge, ""};
constexpr MetricDesc kRequired{"vigil_host_md_disks_required",
                               "Disks the array's level needs to be complete.", MetricKind::kGauge,
                               ""};
constexpr MetricDesc kSize{"vigil_host_md_size_bytes", "Array size (mdstat blocks x 1024).",
                           MetricKind::kGauge, "bytes"};
constexpr MetricDesc kSynced{"vigil_host_md_synced_bytes",
                             "Bytes the running sync action has done; the size when none runs.",
                             MetricKind::kGauge, "bytes"};
constexpr MetricDesc kSyncRatio{"vigil_host_md_sync_completed_ratio",
                                "Fraction of the running sync action done; 1 when none runs.",
                                MetricKind::kGauge, "ratio"};
constexpr const MetricDesc* kMetrics[] = {&kState, &kDisks,  &kRequired,
                                          &kSize,  &kSynced, &kSyncRatio};
constexpr std::string_view kStates[] = {"active", "inactive", "recovering",
                                        "resync", "check",    "reshape"};
constexpr size_t kMaxMdstatBytes = 1 << 20;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ProcMdstatCollector>(context.paths);
}

Status Bad(std::string_view array, std::string_view what, std::string_view text) {
  return DataLossError("mdstat " + std::string(array) + ": " + std::string(what) + " '" +
                       SanitizeForLog(text, 60) + "'");
}

// "[3/2]" -> required 3, active 2; "[U_U]" -> 1 down. Other tokens are left alone.
Status ParseBracket(std::string_view token, ProcMdstatCollector::Array* a) {
  if (token.size() < 3 || token.front() != '[' || token.back() != ']') {
    return OkStatus();
  }
  const std::string_view inner = token.substr(1, token.size() - 2);
  const size_t slash = inner.find('/');
  if (slash != std::string_view::npos) {
    std::optional<uint64_t> n = ParseUint64(inner.substr(0, slash));
    std::optional<uint64_t> m = ParseUint64(inner.substr(slash + 1));
    if (!n || !m) {
      return Bad(a->name, "bad disk count", token);
    }
    a->disks_required = *n;
    a->disks_active = *m;
  } else if (inner.find_first_not_of("U_") == std::string_view::npos) {
    a->disks_down = static_cast<uint64_t>(std::count(inner.begin(), inner.end(), '_'));
  }
  return OkStatus();
}

// A status_resync() line: "[=>....]  recovery =  8.5% (166264704/1953382400) finish=..." or
// "resync=DELAYED".
Status ParseSync(std::string_view line, ProcMdstatCollector::Array* a) {
  constexpr std::pair<std::string_view, std::string_view> kActions[] = {
      {"recovery", "recovering"}, {"resync", "resync"}, {"check", "check"}, {"reshape", "reshape"}};
  for (const auto& [word, state] : kActions) {
    const size_t at = line.find(word);
    if (at == std::string_view::npos) {
      continue;
    }
    a->state = state;
    std::string_view rest = Trim(line.substr(at + word.size()));
    if (rest.starts_with("=DELAYED") || rest.starts_with("=PENDING")) {
      a->blocks_synced = 0;  // Queued behind another array on the same disks.
      a->sync_ratio = 0;
      return OkStatus();
    }
    const size_t open = rest.find('(');
    const size_t slash = rest.find('/', open);
    const size_t close = rest.find(')', open);
    if (open == std::string_view::npos || slash == std::string_view::npos ||
        close == std::string_view::npos || slash > close) {
      return Bad(a->name, "bad sync progress", line);
    }
    std::optional<uint64_t> done = ParseUint64(rest.substr(open + 1, slash - open - 1));
    std::optional<uint64_t> total = ParseUint64(rest.substr(slash + 1, close - slash - 1));
    if (!done || !total) {
      return Bad(a->name, "bad sync progress", line);
    }
    a->blocks_synced = *done;
    a->sync_ratio = *total > 0 ? static_cast<double>(*done) / static_cast<double>(*total) : 0;
    return OkStatus();
  }
  return OkStatus();
}

}  // namespace

const CollectorInfo ProcMdstatCollector::kInfo = {
    .name = "proc_mdstat",
    .help = "Software RAID (md) array state, disks and sync progress from /proc/mdstat.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ProcMdstatCollector::ProcMdstatCollector(HostPaths paths) : paths_(std::move(paths)) {}

StatusOr<std::vector<ProcMdstatCollector::Array>> ProcMdstatCollector::Parse(
    std::string_view text) {
  std::vector<Array> arrays;
  const std::vector<std::string_view> lines = Split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    const size_t colon = line.find(" : ");
    if (!line.starts_with("md") || colon == std::string_view::npos) {
      continue;  // "Personalities : ...", "unused devices: ...", array detail lines.
    }
    Array a;
    a.name = Trim(line.substr(0, colon));
    std::string_view rest = line.substr(colon + 3);
    std::string_view field;
    if (!NextField(&rest, &field) || (field != "active" && field != "inactive")) {
      return Bad(a.name, "expected active or inactive", line);
    }
    a.state = field == "active" ? kStates[0] : kStates[1];
    while (NextField(&rest, &field)) {
      if (field.find('[') == std::string_view::npos || field.starts_with('(')) {
        continue;  // The level ("raid1") and "(read-only)".
      }
      ++a.disks_total;
      a.disks_failed += field.find("(F)") != std::string_view::npos ? 1 : 0;
      a.disks_spare += field.find("(S)") != std::string_view::npos ? 1 : 0;
    }
    bool sized = false;
    for (size_t j = i + 1; j < lines.size() && !Trim(lines[j]).empty(); ++j) {
      std::string_view detail = lines[j];
      if (j == i + 1) {
        std::string_view blocks, word;
        std::string_view d = detail;
        if (!NextField(&d, &blocks) || !NextField(&d, &word) || word != "blocks") {
          return Bad(a.name, "expected 'N blocks'", detail);
        }
        VIGIL_ASSIGN_OR_RETURN(a.blocks, ParseCounterField(blocks, "mdstat blocks"));
        sized = true;
        a.disks_active = a.disks_required = a.disks_total - a.disks_failed - a.disks_spare;
        while (NextField(&d, &word)) {
          VIGIL_RETURN_IF_ERROR(ParseBracket(word, &a));
        }
        continue;
      }
      VIGIL_RETURN_IF_ERROR(ParseSync(detail, &a));
    }
    if (!sized) {
      return Bad(a.name, "no size line after", line);
    }
    if (a.sync_ratio == 1) {
      a.blocks_synced = a.blocks;
    }
    arrays.push_back(a);
  }
  return arrays;
}

Status ProcMdstatCollector::Collect(MetricWriter& out) {
  const std::string path = paths_.Proc("mdstat");
  VIGIL_RETURN_IF_ERROR(files_.ReadInto(path, &buf_, kMaxMdstatBytes));
  StatusOr<std::vector<Array>> arrays = Parse(buf_);
  if (!arrays.ok()) {
    return arrays.status().WithContext(path);
  }
  if (arrays->empty()) {
    return NotFoundError(path + ": no md arrays");
  }
  for (const Array& a : *arrays) {
    const std::string device(a.name);
    for (std::string_view state : kStates) {
      out.Add(kState, state == a.state ? 1 : 0,
              {{"device", device}, {"state", std::string(state)}});
    }
    const std::pair<std::string_view, uint64_t> disks[] = {{"active", a.disks_active},
                                                           {"failed", a.disks_failed},
                                                           {"spare", a.disks_spare},
                                                           {"down", a.disks_down}};
    for (const auto& [state, n] : disks) {
      out.Add(kDisks, static_cast<double>(n), {{"device", device}, {"state", std::string(state)}});
    }
    out.Add(kRequired, static_cast<double>(a.disks_required), {{"device", device}});
    out.Add(kSize, static_cast<double>(a.blocks) * 1024, {{"device", device}});
    out.Add(kSynced, static_cast<double>(a.blocks_synced) * 1024, {{"device", device}});
    out.Add(kSyncRatio, a.sync_ratio, {{"device", device}});
  }
  return OkStatus();
}

}  // namespace vigil
