// SPDX-License-Identifier: Apache-2.0
// Every network interface's link attributes in one RTM_GETLINK dump (rtnetlink(7)): what
// /sys/class/net/<iface>/ gives one pread per attribute and one dev_get_stats() per statistics/
// file, the kernel fills once per interface here (rtnl_fill_ifinfo). sys_netclass reads its
// per-tick values this way on the daemon's own /sys; a dump of three interfaces costs about a
// third of their 72 sysfs reads on a cold tick. The answer is for the daemon's network
// namespace; /sys/class/net shows the namespace of whoever mounted /sys, which sys_netclass
// checks before it uses the two together.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace vigil {

// rtnl_link_stats64's detailed error counters (include/uapi/linux/if_link.h), the ones sysfs
// has as statistics/<name>. A kernel whose IFLA_STATS64 is shorter than a field leaves it unset.
struct LinkErrorCounters {
  std::optional<uint64_t> rx_length_errors, rx_over_errors, rx_crc_errors, rx_frame_errors,
      rx_missed_errors, tx_aborted_errors, tx_carrier_errors, tx_heartbeat_errors, tx_window_errors,
      rx_nohandler;
};

struct LinkAttributes {
  int index = 0;          // ifi_index.
  uint16_t type = 0;      // ifi_type: ARPHRD_*.
  uint32_t flags = 0;     // ifi_flags: dev_get_flags(), with IFF_RUNNING/LOWER_UP/DORMANT.
  std::string name;       // IFLA_IFNAME.
  std::string address;    // IFLA_ADDRESS as sysfs prints it ("0c:42:a1:5e:6f:70"); may be empty.
  std::string broadcast;  // IFLA_BROADCAST, likewise.
  std::string ifalias;    // IFLA_IFALIAS, trimmed as sysfs text is; empty when unset.
  std::optional<uint32_t> link;  // IFLA_LINK: absent when the interface is its own link.
  std::optional<uint32_t> mtu, tx_queue_len, group, carrier_changes, carrier_up_count,
      carrier_down_count;
  std::optional<uint8_t> operstate;  // IF_OPER_*; the kernel says down for an interface not up.
  std::optional<uint8_t> link_mode, carrier, proto_down;
  std::optional<LinkErrorCounters> errors;  // From IFLA_STATS64.
};

// sysfs's word for an IF_OPER_* value (net/core/net-sysfs.c operstates[]); empty past the table,
// where sysfs answers EINVAL.
std::string_view OperstateName(uint8_t operstate);

struct LinkDumpProgress {
  bool done = false;         // NLMSG_DONE was seen.
  bool interrupted = false;  // A message carried NLM_F_DUMP_INTR.
};
// Parses one datagram of a RTM_GETLINK dump answer, appending its links to *links. Messages of
// another sequence number are skipped. NLMSG_ERROR is the kernel's errno; a truncated or
// malformed message is DataLoss.
Status ParseLinkDump(std::span<const uint8_t> datagram, uint32_t sequence,
                     std::vector<LinkAttributes>* links, LinkDumpProgress* progress);

// A NETLINK_ROUTE socket kept open between dumps.
class LinkDumper {
 public:
  static constexpr size_t kMaxLinks = 65536;            // More is not a host we understand.
  static constexpr size_t kMaxAnswerBytes = 64u << 20;  // Cap on one dump's answer.
  LinkDumper() = default;
  ~LinkDumper();
  LinkDumper(const LinkDumper&) = delete;
  LinkDumper& operator=(const LinkDumper&) = delete;

  // Opens the socket; a refused socket (seccomp, no netlink) is the error, and sysfs serves.
  Status Open();
  // One dump of every link. A dump the kernel marks interrupted (NLM_F_DUMP_INTR: links changed
  // while it ran) is asked again once. Every receive has a 1 s deadline. After an error the
  // socket is closed (Open() again to retry).
  StatusOr<std::vector<LinkAttributes>> Dump();
  void Close();

 private:
  Status DumpOnce(std::vector<LinkAttributes>* links, LinkDumpProgress* progress);
  int fd_ = -1;
  uint32_t sequence_ = 0;
  std::vector<uint8_t> buffer_;
};

}  // namespace vigil
