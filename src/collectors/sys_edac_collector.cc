// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_edac_collector.h"

#include <string>
#include <utility>

#include "base/file_util.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kCe{"vigil_host_edac_correctable_errors_total",
                         "Corrected memory errors seen by the controller (ce_count).",
                         MetricKind::kCounter, ""};
constexpr MetricDesc kUe{"vigil_host_edac_uncorrectable_errors_total",
                         "Uncorrected memory errors seen by the controller (ue_count).",
                         MetricKind::kCounter, ""};
constexpr MetricDesc kCsrowCe{"vigil_host_edac_csrow_correctable_errors_total",
                              "Corrected errors on a chip-select row (csrow*/ce_count).",
                              MetricKind::kCounter, ""};
constexpr MetricDesc kCsrowUe{"vigil_host_edac_csrow_uncorrectable_errors_total",
                              "Uncorrected errors on a chip-select row (csrow*/ue_count).",
                              MetricKind::kCounter, ""};
constexpr MetricDesc kDimmCe{"vigil_host_edac_dimm_correctable_errors_total",
                             "Corrected errors on a DIMM (dimm*/dimm_ce_count).",
                             MetricKind::kCounter, ""};
constexpr MetricDesc kDimmUe{"vigil_host_edac_dimm_uncorrectable_errors_total",
                             "Uncorrected errors on a DIMM (dimm*/dimm_ue_count).",
                             MetricKind::kCounter, ""};
constexpr const MetricDesc* kMetrics[] = {&kCe, &kUe, &kCsrowCe, &kCsrowUe, &kDimmCe, &kDimmUe};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysEdacCollector>(context.paths);
}

}  // namespace

const CollectorInfo SysEdacCollector::kInfo = {
    .name = "sys_edac",
    .help = "Memory controller error counts (EDAC) from /sys/devices/system/edac/mc.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysEdacCollector::SysEdacCollector(HostPaths paths, int rescan_every)
    : paths_(std::move(paths)), schedule_(rescan_every) {}

Status SysEdacCollector::Rescan() {
  reader_.CloseKept();  // Nothing from the old listing stays open.
  plan_.clear();
  const std::string root = paths_.Sys("devices/system/edac/mc");
  Status error;
  bool found = false;
  for (const std::string& mc : ListSorted(root, "mc", &error)) {
    uint64_t n = 0;
    if (!NumberAfterPrefix(mc, "mc", &n)) {
      continue;
    }
    found = true;
    const std::string dir = JoinPath(root, mc);
    const std::string controller = std::to_string(n);
    plan_.push_back({JoinPath(dir, "ce_count"), &kCe, 1, {{"controller", controller}}});
    plan_.push_back({JoinPath(dir, "ue_count"), &kUe, 1, {{"controller", controller}}});
    const Labels unknown = {{"controller", controller}, {"csrow", "unknown"}};
    plan_.push_back({JoinPath(dir, "ce_noinfo_count"), &kCsrowCe, 1, unknown});
    plan_.push_back({JoinPath(dir, "ue_noinfo_count"), &kCsrowUe, 1, unknown});
    Status sub;
    for (const std::string& entry : ListSorted(dir, "", &sub)) {
      uint64_t m = 0;
      const std::string sub_dir = JoinPath(dir, entry);
      if (NumberAfterPrefix(entry, "csrow", &m)) {
        const Labels labels = {{"controller", controller}, {"csrow", std::to_string(m)}};
        plan_.push_back({JoinPath(sub_dir, "ce_count"), &kCsrowCe, 1, labels});
        plan_.push_back({JoinPath(sub_dir, "ue_count"), &kCsrowUe, 1, labels});
      } else if (NumberAfterPrefix(entry, "dimm", &m) || NumberAfterPrefix(entry, "rank", &m)) {
        StatusOr<std::string_view> label = reader_.Read(JoinPath(sub_dir, "dimm_label"));
        const Labels labels = {{"controller", controller},
                               {"dimm", entry},
                               {"label", label.ok() ? std::string(*label) : ""}};
        plan_.push_back({JoinPath(sub_dir, "dimm_ce_count"), &kDimmCe, 1, labels});
        plan_.push_back({JoinPath(sub_dir, "dimm_ue_count"), &kDimmUe, 1, labels});
      }
    }
  }
  if (!found) {
    return NotFoundError(root + ": no EDAC memory controllers" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  // A driver that lacks a file (no noinfo counts) would otherwise force a rescan every tick.
  std::erase_if(plan_, [](const PlannedValue& p) { return !PathExists(p.path); });
  return OkStatus();
}

Status SysEdacCollector::Collect(MetricWriter& out) {
  VIGIL_RETURN_IF_ERROR(schedule_.RescanIfDue([this] { return Rescan(); }));
  return EmitPlanned(plan_, reader_, schedule_, out);
}

}  // namespace vigil
