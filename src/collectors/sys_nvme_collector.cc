// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_nvme_collector.h"

#include <utility>

#include "base/file_util.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kNvmeInfo{"vigil_host_nvme_info",
                               "NVMe controller identity and state (labels); 1.",
                               MetricKind::kGauge, "info"};
constexpr const MetricDesc* kMetrics[] = {&kNvmeInfo};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysNvmeCollector>(context.paths);
}

}  // namespace

const CollectorInfo SysNvmeCollector::kInfo = {
    .name = "sys_nvme",
    .help = "NVMe controller model, serial, firmware and state from /sys/class/nvme.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysNvmeCollector::SysNvmeCollector(HostPaths paths, int rescan_every)
    : paths_(std::move(paths)), schedule_(rescan_every) {}

Status SysNvmeCollector::Rescan() {
  controllers_.clear();
  const std::string root = paths_.Sys("class/nvme");
  Status error;
  for (const std::string& entry : ListSorted(root, "nvme", &error)) {
    uint64_t n = 0;
    if (!NumberAfterPrefix(entry, "nvme", &n)) {
      continue;
    }
    const std::string dir = JoinPath(root, entry);
    Controller c{.state_path = JoinPath(dir, "state"), .labels = {{"device", entry}}};
    constexpr std::pair<std::string_view, std::string_view> kFields[] = {
        {"firmware_rev", "firmware_revision"},
        {"model", "model"},
        {"serial", "serial"},
        {"cntlid", "cntlid"}};
    for (const auto& [file, label] : kFields) {
      StatusOr<std::string_view> text = reader_.Read(JoinPath(dir, file));
      c.labels.emplace_back(label, text.ok() ? std::string(*text) : "");
    }
    controllers_.push_back(std::move(c));
  }
  if (controllers_.empty()) {
    return NotFoundError(root + ": no NVMe controllers" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  return OkStatus();
}

Status SysNvmeCollector::Collect(MetricWriter& out) {
  if (schedule_.Due()) {
    Status s = Rescan();
    if (!s.ok()) {
      schedule_.Invalidate();
      return s;
    }
  }
  for (const Controller& c : controllers_) {
    StatusOr<std::string_view> state = reader_.Read(c.state_path);
    if (!state.ok() && state.status().code() == StatusCode::kNotFound &&
        !PathExists(c.state_path.substr(0, c.state_path.rfind('/')))) {
      schedule_.Invalidate();  // The controller went away.
      continue;
    }
    Labels labels = c.labels;
    labels.emplace_back("state", state.ok() ? std::string(*state) : "unknown");
    out.Add(kNvmeInfo, 1, std::move(labels));
  }
  return OkStatus();
}

}  // namespace vigil
