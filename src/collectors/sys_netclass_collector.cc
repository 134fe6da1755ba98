// SPDX-License-Identifier: Apache-2.0
#include "collectors/sys_netclass_collector.h"

#include <linux/if.h>  // IFF_UP, IFF_DORMANT (glibc's net/if.h lacks the latter).

#include <algorithm>
#include <optional>
#include <utility>

#include "base/file_util.h"
#include "base/logging.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricKind kG = MetricKind::kGauge;
constexpr MetricKind kC = MetricKind::kCounter;

constexpr MetricDesc kInfoDesc{"vigil_host_network_info",
                               "Interface address, broadcast, duplex, operstate, ifalias; 1.", kG,
                               "info"};
constexpr MetricDesc kUp{"vigil_host_network_up", "1 when operstate is up, else 0.", kG, ""};
constexpr MetricDesc kSpeed{"vigil_host_network_speed_bytes_per_second",
                            "Negotiated link speed (speed Mbit/s x 125000).", kG,
                            "bytes_per_second"};
constexpr MetricDesc kCarrier{"vigil_host_network_carrier", "1 when the link has carrier.", kG, ""};
constexpr MetricDesc kCarrierChanges{"vigil_host_network_carrier_changes_total",
                                     "Times the link went up or down (carrier_changes).", kC, ""};
constexpr MetricDesc kCarrierUp{"vigil_host_network_carrier_up_changes_total",
                                "Times the link came up (carrier_up_count).", kC, ""};
constexpr MetricDesc kCarrierDown{"vigil_host_network_carrier_down_changes_total",
                                  "Times the link went down (carrier_down_count).", kC, ""};
constexpr MetricDesc kMtu{"vigil_host_network_mtu_bytes", "Maximum transmission unit.", kG,
                          "bytes"};
constexpr MetricDesc kTxQueue{"vigil_host_network_transmit_queue_length",
                              "Transmit queue length in packets (tx_queue_len).", kG, ""};
constexpr MetricDesc kProtocol{"vigil_host_network_protocol_type",
                               "ARPHRD_* hardware type (type: 1 ethernet, 32 infiniband).", kG, ""};
constexpr MetricDesc kFlags{"vigil_host_network_flags", "IFF_* interface flags (flags).", kG, ""};
constexpr MetricDesc kIfindex{"vigil_host_network_iface_id", "Interface index (ifindex).", kG, ""};
constexpr MetricDesc kIflink{"vigil_host_network_iface_link",
                             "Index of the interface this one sends through (iflink).", kG, ""};
constexpr MetricDesc kLinkMode{"vigil_host_network_iface_link_mode",
                               "Link mode: 0 default, 1 dormant (link_mode).", kG, ""};
constexpr MetricDesc kDormant{"vigil_host_network_dormant", "1 when the interface is dormant.", kG,
                              ""};
constexpr MetricDesc kDevId{"vigil_host_network_device_id",
                            "Device id among interfaces sharing one address (dev_id).", kG, ""};
constexpr MetricDesc kAddrAssign{"vigil_host_network_address_assign_type",
                                 "How the address was set: 0 permanent, 1 random, 2 stolen, 3 set.",
                                 kG, ""};
constexpr MetricDesc kNameAssign{"vigil_host_network_name_assign_type",
                                 "How the name was set: 1 enumerated, 2 predictable, 3 user, 4 "
                                 "renamed.",
                                 kG, ""};
constexpr MetricDesc kGroup{"vigil_host_network_net_dev_group", "Interface group (netdev_group).",
                            kG, ""};
constexpr MetricDesc kProtoDown{"vigil_host_network_protocol_down",
                                "1 when the interface is administratively protocol-down.", kG, ""};

struct Attr {
  std::string_view file;
  const MetricDesc* desc;
  double scale = 1;
  bool hex = false;
  bool skip_negative = false;
  bool identity = false;    // Set when the interface is created: read at rescans only.
  bool sysfs_only = false;  // Not in the rtnetlink dump (or, for flags, not the same value).
};
const Attr kAttrs[] = {
    {"speed", &kSpeed, 125000, false, true, false, true},
    {"carrier", &kCarrier},
    {"carrier_changes", &kCarrierChanges},
    {"carrier_up_count", &kCarrierUp},
    {"carrier_down_count", &kCarrierDown},
    {"mtu", &kMtu},
    {"tx_queue_len", &kTxQueue},
    {"type", &kProtocol, 1, false, false, true},
    {"flags", &kFlags, 1, true, false, false, true},
    {"ifindex", &kIfindex, 1, false, false, true},
    {"iflink", &kIflink, 1, false, false, true},
    {"link_mode", &kLinkMode},
    {"dormant", &kDormant},
    {"dev_id", &kDevId, 1, true, false, true, true},
    {"addr_assign_type", &kAddrAssign, 1, false, false, true, true},
    {"name_assign_type", &kNameAssign, 1, false, false, true, true},
    {"netdev_group", &kGroup},
    {"proto_down", &kProtoDown},
};

// statistics/<file>: the error kinds /proc/net/dev folds into its errs, frame and carrier
// columns (proc_netdev exports those columns, FIFO, compressed, multicast and collisions).
#define VIGIL_NET_STAT(ident, name, help) \
  constexpr MetricDesc ident{"vigil_host_network_" name "_total", help, kC, ""};
VIGIL_NET_STAT(kRxCrc, "receive_crc_errors", "Received frames with a bad CRC.")
VIGIL_NET_STAT(kRxAlign, "receive_alignment_errors",
               "Received frames misaligned (rx_frame_errors).")
VIGIL_NET_STAT(kRxLength, "receive_length_errors", "Received frames with a bad length.")
VIGIL_NET_STAT(kRxMissed, "receive_missed_errors", "Frames the NIC missed for lack of buffers.")
VIGIL_NET_STAT(kRxOver, "receive_over_errors", "Received frames longer than the buffer.")
VIGIL_NET_STAT(kRxNohandler, "receive_nohandler_packets",
               "Packets dropped because no protocol handled them.")
VIGIL_NET_STAT(kTxAborted, "transmit_aborted_errors", "Transmissions aborted by the NIC.")
VIGIL_NET_STAT(kTxCarrierSense, "transmit_carrier_sense_errors",
               "Transmit errors from carrier loss (tx_carrier_errors).")
VIGIL_NET_STAT(kTxHeartbeat, "transmit_heartbeat_errors", "Transmit SQE heartbeat errors.")
VIGIL_NET_STAT(kTxWindow, "transmit_window_errors", "Late collisions on transmit.")
#undef VIGIL_NET_STAT

struct Stat {
  std::string_view file;
  const MetricDesc* desc;
  std::optional<uint64_t> LinkErrorCounters::*field;  // The same counter in the rtnetlink dump.
};
constexpr Stat kStats[] = {
    {"rx_crc_errors", &kRxCrc, &LinkErrorCounters::rx_crc_errors},
    {"rx_frame_errors", &kRxAlign, &LinkErrorCounters::rx_frame_errors},
    {"rx_length_errors", &kRxLength, &LinkErrorCounters::rx_length_errors},
    {"rx_missed_errors", &kRxMissed, &LinkErrorCounters::rx_missed_errors},
    {"rx_over_errors", &kRxOver, &LinkErrorCounters::rx_over_errors},
    {"rx_nohandler", &kRxNohandler, &LinkErrorCounters::rx_nohandler},
    {"tx_aborted_errors", &kTxAborted, &LinkErrorCounters::tx_aborted_errors},
    {"tx_carrier_errors", &kTxCarrierSense, &LinkErrorCounters::tx_carrier_errors},
    {"tx_heartbeat_errors", &kTxHeartbeat, &LinkErrorCounters::tx_heartbeat_errors},
    {"tx_window_errors", &kTxWindow, &LinkErrorCounters::tx_window_errors},
};

constexpr const MetricDesc* kMetrics[] = {
    &kInfoDesc,    &kUp,          &kSpeed,     &kCarrier,        &kCarrierChanges, &kCarrierUp,
    &kCarrierDown, &kMtu,         &kTxQueue,   &kProtocol,       &kFlags,          &kIfindex,
    &kIflink,      &kLinkMode,    &kDormant,   &kDevId,          &kAddrAssign,     &kNameAssign,
    &kGroup,       &kProtoDown,   &kRxCrc,     &kRxAlign,        &kRxLength,       &kRxMissed,
    &kRxOver,      &kRxNohandler, &kTxAborted, &kTxCarrierSense, &kTxHeartbeat,    &kTxWindow};

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<SysNetclassCollector>(context.paths);
}

}  // namespace

const CollectorInfo SysNetclassCollector::kInfo = {
    .name = "sys_netclass",
    .help =
        "Network link speed, carrier, MTU, state and detailed error counters from /sys/class/net.",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

SysNetclassCollector::SysNetclassCollector(HostPaths paths, int rescan_every, Source source)
    : paths_(std::move(paths)), schedule_(rescan_every) {
  netlink_ =
      source == Source::kAuto && paths_.sys_root == HostPaths{}.sys_root && dumper_.Open().ok();
}

template <typename Attr>
void SysNetclassCollector::AddAttribute(const Attr& a, const std::string& dir, const Labels& labels,
                                        Status* error) {
  const std::string path = JoinPath(dir, a.file);
  if (!a.identity) {
    if (PathExists(path)) {
      plan_.push_back({path, a.desc, a.scale, labels, a.hex, a.skip_negative});
    }
    return;
  }
  StatusOr<double> v = a.hex ? reader_.ReadHex(path) : reader_.ReadNumber(path);
  if (v.ok()) {
    identity_.push_back({a.desc, *v, labels});
  } else if (v.status().code() == StatusCode::kDataLoss && error->ok()) {
    *error = v.status();
  }
}

Status SysNetclassCollector::Rescan() {
  reader_.CloseKept();  // Nothing from the old listing stays open.
  interfaces_.clear();
  plan_.clear();
  identity_.clear();
  const std::string root = paths_.Sys("class/net");
  Status error;
  for (const std::string& name : ListSorted(root, "", &error)) {
    const std::string dir = JoinPath(root, name);
    if (name == "lo" || !IsDirectory(dir)) {
      continue;  // bonding_masters is a file in class/net.
    }
    Interface iface{.name = name, .dir = dir, .address = {}, .broadcast = {}, .ifalias = {}};
    for (auto [file, value] :
         {std::pair{"address", &iface.address}, std::pair{"broadcast", &iface.broadcast},
          std::pair{"ifalias", &iface.ifalias}}) {
      StatusOr<std::string_view> text = reader_.Read(JoinPath(dir, file));
      *value = text.ok() ? std::string(*text) : "";
    }
    interfaces_.push_back(std::move(iface));
    const Labels labels = {{"interface", name}};
    for (const Attr& a : kAttrs) {
      AddAttribute(a, dir, labels, &error);
    }
    for (const Stat& s : kStats) {
      const std::string path = JoinPath(dir, "statistics/" + std::string(s.file));
      if (PathExists(path)) {
        plan_.push_back({path, s.desc, 1, labels});
      }
    }
  }
  if (interfaces_.empty()) {
    return NotFoundError(root + ": no network interfaces besides lo" +
                         (error.ok() ? "" : " (" + error.message() + ")"));
  }
  return error.code() == StatusCode::kDataLoss ? error : OkStatus();
}

void SysNetclassCollector::CollectInfo(const Interface& iface, MetricWriter& out) {
  StatusOr<std::string_view> state = reader_.ReadKept(JoinPath(iface.dir, "operstate"));
  if (!state.ok() && state.status().code() == StatusCode::kNotFound) {
    schedule_.Invalidate();  // The interface went away (a veth of a finished container).
    return;
  }
  const std::string operstate = state.ok() ? std::string(*state) : "";
  // duplex answers EINVAL without carrier; the label is then empty, as in node_exporter.
  StatusOr<std::string_view> duplex = reader_.ReadKept(JoinPath(iface.dir, "duplex"));
  out.Add(kInfoDesc, 1,
          {{"interface", iface.name},
           {"address", iface.address},
           {"broadcast", iface.broadcast},
           {"duplex", duplex.ok() ? std::string(*duplex) : ""},
           {"operstate", operstate},
           {"ifalias", iface.ifalias}});
  out.Add(kUp, operstate == "up" ? 1 : 0, {{"interface", iface.name}});
}

Status SysNetclassCollector::CollectSysfs(MetricWriter& out) {
  if (!dumped_.empty()) {  // The plan was made beside a dump: list sysfs afresh.
    dumped_.clear();
    schedule_.Invalidate();
  }
  const Status scan = schedule_.RescanIfDue([this] { return Rescan(); });
  if (IsAbsent(scan)) {
    return scan;
  }
  for (const Interface& iface : interfaces_) {
    CollectInfo(iface, out);
  }
  for (const IdentityValue& v : identity_) {
    out.Add(*v.desc, v.value, v.labels);
  }
  Status error = EmitPlanned(plan_, reader_, schedule_, out);
  return scan.ok() ? error : scan;
}

Status SysNetclassCollector::RescanBeside(const std::vector<LinkAttributes>& links,
                                          std::string* mismatch) {
  reader_.CloseKept();
  interfaces_.clear();
  plan_.clear();
  identity_.clear();
  dumped_.clear();
  const std::string root = paths_.Sys("class/net");
  // sysfs shows the network namespace of whoever mounted it (a container's own network with the
  // host's /sys, unshare -n): then its interfaces are not the dump's, by name or by index.
  Status error;
  std::vector<std::string> listed;
  for (const std::string& name : ListSorted(root, "", &error)) {
    if (name != "lo" && IsDirectory(JoinPath(root, name))) {
      listed.push_back(name);
    }
  }
  if (!error.ok()) {
    return error;  // Not a sign of another namespace: the listing itself failed.
  }
  std::vector<std::string> names;
  for (const LinkAttributes& link : links) {
    if (link.name != "lo") {
      names.push_back(link.name);
    }
  }
  std::sort(names.begin(), names.end());
  if (names != listed) {
    *mismatch = "dump:";
    for (const std::string& n : names) *mismatch += " " + n;
    *mismatch += "; sysfs:";
    for (const std::string& n : listed) *mismatch += " " + n;
    return FailedPreconditionError("sysfs and rtnetlink list other interfaces");
  }
  for (const LinkAttributes& link : links) {
    dumped_.emplace_back(link.index, link.name);
    if (link.name == "lo") {
      continue;
    }
    const std::string dir = JoinPath(root, link.name);
    StatusOr<uint64_t> index = reader_.ReadUint(JoinPath(dir, "ifindex"));
    if (!index.ok() || *index != static_cast<uint64_t>(link.index)) {
      *mismatch = link.name + ": ifindex " + std::to_string(link.index) + " in the dump, " +
                  (index.ok() ? std::to_string(*index) : "none") + " in sysfs";
      dumped_.clear();
      return FailedPreconditionError("sysfs's " + link.name + " has another ifindex");
    }
    interfaces_.push_back(
        {.name = link.name, .dir = dir, .address = {}, .broadcast = {}, .ifalias = {}});
    const Labels labels = {{"interface", link.name}};
    for (const Attr& a : kAttrs) {
      if (a.sysfs_only && a.desc != &kSpeed) {  // Speed is read by EmitLink, for a link up.
        AddAttribute(a, dir, labels, &error);
      }
    }
  }
  if (interfaces_.empty()) {
    return NotFoundError("rtnetlink: no network interfaces besides lo");
  }
  return error;
}

// The sysfs file's value from the dump's attribute (net/core/net-sysfs.c beside rtnl_fill_ifinfo).
void SysNetclassCollector::EmitLink(const LinkAttributes& link, const Interface& iface,
                                    MetricWriter& out) {
  const Labels labels = {{"interface", link.name}};
  auto add = [&](const MetricDesc& desc, const auto& value) {
    if (value) {
      out.Add(desc, static_cast<double>(*value), labels);
    }
  };
  const bool up = (link.flags & IFF_UP) != 0;  // netif_running(): sysfs answers EINVAL otherwise.
  // duplex (and speed) of a link that is not up is EINVAL, after sysfs took the rtnl lock.
  StatusOr<std::string_view> duplex = up ? reader_.ReadKept(JoinPath(iface.dir, "duplex"))
                                         : StatusOr<std::string_view>(InvalidArgumentError(""));
  const std::string_view operstate =
      link.operstate ? OperstateName(*link.operstate) : std::string_view();
  out.Add(kInfoDesc, 1,
          {{"interface", link.name},
           {"address", link.address},
           {"broadcast", link.broadcast},
           {"duplex", duplex.ok() ? std::string(*duplex) : ""},
           {"operstate", std::string(operstate)},
           {"ifalias", link.ifalias}});
  out.Add(kUp, operstate == "up" ? 1 : 0, labels);
  if (up) {
    StatusOr<double> speed = reader_.ReadNumber(JoinPath(iface.dir, "speed"), true);
    if (speed.ok() && *speed >= 0) {  // -1: no carrier.
      out.Add(kSpeed, *speed * 125000, labels);
    } else if (speed.status().code() == StatusCode::kNotFound) {
      schedule_.Invalidate();
    }
    add(kCarrier, link.carrier);
  }
  add(kCarrierChanges, link.carrier_changes);
  add(kCarrierUp, link.carrier_up_count);
  add(kCarrierDown, link.carrier_down_count);
  add(kMtu, link.mtu);
  add(kTxQueue, link.tx_queue_len);
  out.Add(kProtocol, link.type, labels);
  out.Add(kIfindex, link.index, labels);
  out.Add(kIflink, link.link ? *link.link : static_cast<uint32_t>(link.index), labels);
  add(kLinkMode, link.link_mode);
  if (up) {
    out.Add(kDormant, (link.flags & IFF_DORMANT) != 0 ? 1 : 0, labels);
  }
  add(kGroup, link.group);
  add(kProtoDown, link.proto_down);
  if (link.errors) {
    for (const Stat& stat : kStats) {
      add(*stat.desc, (*link.errors).*stat.field);
    }
  }
}

Status SysNetclassCollector::FallBackToSysfs(std::string_view why, MetricWriter& out) {
  VIGIL_LOG_INFO("sys_netclass: reading sysfs alone from now on: {}", why);
  netlink_ = false;
  dumper_.Close();
  return CollectSysfs(out);
}

Status SysNetclassCollector::CollectNetlink(MetricWriter& out) {
  StatusOr<std::vector<LinkAttributes>> links = dumper_.Dump();
  if (!links.ok()) {
    return FallBackToSysfs(links.status().message(), out);
  }
  bool same = links->size() == dumped_.size();
  for (size_t i = 0; same && i < links->size(); ++i) {
    same = dumped_[i].first == (*links)[i].index && dumped_[i].second == (*links)[i].name;
  }
  if (!same) {
    schedule_.Invalidate();
  }
  std::string mismatch;
  const Status scan = schedule_.RescanIfDue([&] { return RescanBeside(*links, &mismatch); });
  if (!mismatch.empty()) {
    // The same mismatch on three rescans in a row: another namespace shows the same sides each
    // time, where an interface made or removed between a dump and a listing (pods coming and
    // going) does not. This tick reads sysfs either way.
    namespace_mismatches_ = mismatch == last_mismatch_ ? namespace_mismatches_ + 1 : 1;
    last_mismatch_ = mismatch;
    if (namespace_mismatches_ >= 3) {
      return FallBackToSysfs("/sys/class/net is another network namespace's (" + mismatch + ")",
                             out);
    }
    return CollectSysfs(out);
  }
  namespace_mismatches_ = 0;
  last_mismatch_.clear();
  if (IsAbsent(scan)) {
    return scan;
  }
  // interfaces_ are the dump's links but lo, in its order (the rescan was of this same list).
  auto iface = interfaces_.begin();
  for (const LinkAttributes& link : *links) {
    if (link.name != "lo" && iface != interfaces_.end()) {
      EmitLink(link, *iface++, out);
    }
  }
  for (const IdentityValue& v : identity_) {
    out.Add(*v.desc, v.value, v.labels);
  }
  Status error = EmitPlanned(plan_, reader_, schedule_, out);
  return scan.ok() ? error : scan;
}

Status SysNetclassCollector::Collect(MetricWriter& out) {
  return netlink_ ? CollectNetlink(out) : CollectSysfs(out);
}

}  // namespace vigil
