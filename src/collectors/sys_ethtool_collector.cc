// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_ethtool_collector.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/file_util.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricDesc kStat{"vigil_host_ethtool_statistic_total",
                           "NIC driver statistic, as ethtool -S prints it (label statistic).",
                           MetricKind::kCounter, ""};
constexpr MetricDesc kDriverInfo{"vigil_host_ethtool_info",
                                 "NIC driver, version, firmware_version and bus_info; 1.",
                                 MetricKind::kGauge, "info"};
constexpr const MetricDesc* kMetrics[] = {&kStat, &kDriverInfo};

class SocketEthtoolIoctl : public EthtoolIoctl {
 public:
  explicit SocketEthtoolIoctl(ScopedFd fd) : fd_(std::move(fd)) {}
  Status Call(const std::string& ifname, void* data) override {
    if (ifname.size() >= IFNAMSIZ) {
      return InvalidArgumentError("interface name too long: " + ifname);
    }
    ifreq req{};
    std::memcpy(req.ifr_name, ifname.data(), ifname.size());
    req.ifr_data = static_cast<char*>(data);
    if (ioctl(fd_.get(), SIOCETHTOOL, &req) != 0) {
      const int err = errno;
      if (err == EOPNOTSUPP) {
        return UnimplementedError("SIOCETHTOOL " + ifname + ": not supported by the driver");
      }
      return ErrnoStatus(err, "SIOCETHTOOL " + ifname);
    }
    return OkStatus();
  }

 private:
  ScopedFd fd_;
};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysEthtoolCollector>(context.paths, nullptr);
}

// A fixed-size char field of an ethtool struct, up to its first NUL.
std::string Field(const char* text, size_t size) { return std::string(text, strnlen(text, size)); }

}  // namespace

StatusOr<std::unique_ptr<EthtoolIoctl>> MakeSocketEthtoolIoctl() {
  ScopedFd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "socket for SIOCETHTOOL");
  }
  return std::unique_ptr<EthtoolIoctl>(new SocketEthtoolIoctl(std::move(fd)));
}

const CollectorInfo SysEthtoolCollector::kInfo = {
    .name = "sys_ethtool",
    .help = "NIC driver statistics (ethtool -S) via the SIOCETHTOOL ioctl; opt-in.",
    .enabled_by_default = false,
    .metrics = kMetrics,
    .create = &Create,
};

SysEthtoolCollector::SysEthtoolCollector(HostPaths paths, std::unique_ptr<EthtoolIoctl> ioctl,
                                         int rescan_every)
    : paths_(std::move(paths)),
      ioctl_(std::move(ioctl)),
      schedule_(rescan_every),
      stats_buf_(new uint64_t[1 + kMaxStats]),  // ethtool_stats is two u32s: one u64 slot.
      strings_buf_(new char[sizeof(ethtool_gstrings) + size_t{kMaxStats} * ETH_GSTRING_LEN]) {}

Status SysEthtoolCollector::Describe(const std::string& name, Interface* iface) {
  ethtool_drvinfo drv{};
  drv.cmd = ETHTOOL_GDRVINFO;
  VIGIL_RETURN_IF_ERROR(ioctl_->Call(name, &drv));
  if (drv.n_stats == 0) {
    return UnimplementedError(name + ": the driver has no statistics");
  }
  if (drv.n_stats > kMaxStats) {
    return DataLossError(name + ": driver reports " + std::to_string(drv.n_stats) +
                         " statistics, more than " + std::to_string(kMaxStats));
  }
  iface->name = name;
  iface->n_stats = drv.n_stats;
  iface->info = {{"interface", name},
                 {"driver", Field(drv.driver, sizeof(drv.driver))},
                 {"version", Field(drv.version, sizeof(drv.version))},
                 {"firmware_version", Field(drv.fw_version, sizeof(drv.fw_version))},
                 {"bus_info", Field(drv.bus_info, sizeof(drv.bus_info))}};
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf_.get());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = drv.n_stats;
  VIGIL_RETURN_IF_ERROR(ioctl_->Call(name, strings));
  if (strings->len != drv.n_stats || strings->len > kMaxStats) {
    return DataLossError(name + ": " + std::to_string(strings->len) + " statistic names for " +
                         std::to_string(drv.n_stats) + " statistics");
  }
  const char* names = strings_buf_.get() + sizeof(ethtool_gstrings);
  iface->labels.clear();
  for (uint32_t i = 0; i < drv.n_stats; ++i) {
    iface->labels.push_back(
        {{"interface", name},
         {"statistic", Field(names + size_t{i} * ETH_GSTRING_LEN, ETH_GSTRING_LEN)}});
  }
  return OkStatus();
}

Status SysEthtoolCollector::Rescan() {
  interfaces_.clear();
  const std::string root = paths_.Sys("class/net");
  Status error;
  Status first_failure;
  for (const std::string& name : ListSorted(root, "", &error)) {
    if (name == "lo" || !PathExists(JoinPath(root, name + "/device"))) {
      continue;
    }
    Interface iface;
    Status s = Describe(name, &iface);
    if (s.ok()) {
      interfaces_.push_back(std::move(iface));
    } else if (s.code() != StatusCode::kUnimplemented && !IsAbsent(s) && first_failure.ok()) {
      // Unimplemented: no ethtool statistics; absent: the interface went away meanwhile.
      first_failure = s;
    }
  }
  if (interfaces_.empty()) {
    if (!first_failure.ok()) {
      return first_failure;
    }
    return NotFoundError(root + ": no interface with driver statistics" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  return first_failure;
}

Status SysEthtoolCollector::Collect(MetricWriter& out) {
  if (ioctl_ == nullptr) {
    StatusOr<std::unique_ptr<EthtoolIoctl>> made = MakeSocketEthtoolIoctl();
    if (!made.ok()) {
      return made.status();
    }
    ioctl_ = std::move(*made);
  }
  Status scan;
  if (schedule_.Due()) {
    scan = Rescan();
    if (!scan.ok()) {
      schedule_.Invalidate();
    }
    if (interfaces_.empty()) {
      return scan;
    }
  }
  Status error;
  for (const Interface& iface : interfaces_) {
    auto* stats = reinterpret_cast<ethtool_stats*>(stats_buf_.get());
    stats->cmd = ETHTOOL_GSTATS;
    stats->n_stats = iface.n_stats;
    Status s = ioctl_->Call(iface.name, stats);
    if (!s.ok() || stats->n_stats != iface.n_stats) {
      schedule_.Invalidate();  // The interface went away or its driver was reloaded.
      if (!s.ok() && !IsAbsent(s) && error.ok()) {
        error = s;
      }
      continue;
    }
    out.Add(kDriverInfo, 1, iface.info);
    for (uint32_t i = 0; i < iface.n_stats; ++i) {
      out.Add(kStat, static_cast<double>(stats_buf_[1 + i]), iface.labels[i]);
    }
  }
  return scan.ok() ? error : scan;
}

}  // namespace vigil
