// SPDX-License-Identifier: Apache-2.0
#include "collectors/rtnetlink_links.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "base/strings.h"

namespace vigil {
namespace {

// Reads a fixed-size attribute payload; a shorter one is unset (never read past it).
template <typename T>
std::optional<T> Scalar(std::span<const uint8_t> payload) {
  if (payload.size() < sizeof(T)) {
    return std::nullopt;
  }
  T v;
  std::memcpy(&v, payload.data(), sizeof(T));
  return v;
}

// "%*phC" of the kernel's sysfs_format_mac: lowercase hex bytes joined by ':'.
std::string FormatHardwareAddress(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0) {
      out += ':';
    }
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xf];
  }
  return out;
}

// A NUL-terminated string attribute, without its NUL (and never past the payload).
std::string Text(std::span<const uint8_t> payload) {
  const auto* chars = reinterpret_cast<const char*>(payload.data());
  return std::string(chars, strnlen(chars, payload.size()));
}

LinkErrorCounters ErrorCounters(std::span<const uint8_t> payload) {
  rtnl_link_stats64 stats{};
  std::memcpy(&stats, payload.data(), std::min(payload.size(), sizeof(stats)));
  LinkErrorCounters c;
  // A field is set only when the kernel's struct reaches its end.
  auto field = [&](size_t offset, uint64_t value) -> std::optional<uint64_t> {
    return offset + sizeof(uint64_t) <= payload.size() ? std::optional(value) : std::nullopt;
  };
#define VIGIL_LINK_STAT(name) c.name = field(offsetof(rtnl_link_stats64, name), stats.name)
  VIGIL_LINK_STAT(rx_length_errors);
  VIGIL_LINK_STAT(rx_over_errors);
  VIGIL_LINK_STAT(rx_crc_errors);
  VIGIL_LINK_STAT(rx_frame_errors);
  VIGIL_LINK_STAT(rx_missed_errors);
  VIGIL_LINK_STAT(tx_aborted_errors);
  VIGIL_LINK_STAT(tx_carrier_errors);
  VIGIL_LINK_STAT(tx_heartbeat_errors);
  VIGIL_LINK_STAT(tx_window_errors);
  VIGIL_LINK_STAT(rx_nohandler);
#undef VIGIL_LINK_STAT
  return c;
}

void SetAttribute(uint16_t type, std::span<const uint8_t> payload, LinkAttributes* link) {
  switch (type) {
    case IFLA_IFNAME:
      link->name = Text(payload);
      break;
    case IFLA_ADDRESS:
      link->address = FormatHardwareAddress(payload);
      break;
    case IFLA_BROADCAST:
      link->broadcast = FormatHardwareAddress(payload);
      break;
    case IFLA_IFALIAS:
      link->ifalias = std::string(Trim(Text(payload)));  // As sysfs text is read: trimmed.
      break;
    case IFLA_LINK:
      link->link = Scalar<uint32_t>(payload);
      break;
    case IFLA_MTU:
      link->mtu = Scalar<uint32_t>(payload);
      break;
    case IFLA_TXQLEN:
      link->tx_queue_len = Scalar<uint32_t>(payload);
      break;
    case IFLA_GROUP:
      link->group = Scalar<uint32_t>(payload);
      break;
    case IFLA_CARRIER_CHANGES:
      link->carrier_changes = Scalar<uint32_t>(payload);
      break;
    case IFLA_CARRIER_UP_COUNT:
      link->carrier_up_count = Scalar<uint32_t>(payload);
      break;
    case IFLA_CARRIER_DOWN_COUNT:
      link->carrier_down_count = Scalar<uint32_t>(payload);
      break;
    case IFLA_OPERSTATE:
      link->operstate = Scalar<uint8_t>(payload);
      break;
    case IFLA_LINKMODE:
      link->link_mode = Scalar<uint8_t>(payload);
      break;
    case IFLA_CARRIER:
      link->carrier = Scalar<uint8_t>(payload);
      break;
    case IFLA_PROTO_DOWN:
      link->proto_down = Scalar<uint8_t>(payload);
      break;
    case IFLA_STATS64:
      link->errors = ErrorCounters(payload);
      break;
    default:
      break;
  }
}

StatusOr<LinkAttributes> ParseNewLink(std::span<const uint8_t> body) {
  if (body.size() < NLMSG_ALIGN(sizeof(ifinfomsg))) {
    return DataLossError("rtnetlink: RTM_NEWLINK shorter than its ifinfomsg");
  }
  ifinfomsg info;
  std::memcpy(&info, body.data(), sizeof(info));
  LinkAttributes link;
  link.index = info.ifi_index;
  link.type = info.ifi_type;
  link.flags = info.ifi_flags;
  std::span<const uint8_t> rest = body.subspan(NLMSG_ALIGN(sizeof(ifinfomsg)));
  while (rest.size() >= sizeof(rtattr)) {
    rtattr attr;
    std::memcpy(&attr, rest.data(), sizeof(attr));
    if (attr.rta_len < sizeof(rtattr) || attr.rta_len > rest.size()) {
      return DataLossError("rtnetlink: attribute " + std::to_string(attr.rta_type) + " of link " +
                           std::to_string(link.index) + " overruns its message");
    }
    SetAttribute(attr.rta_type & NLA_TYPE_MASK,
                 rest.subspan(RTA_LENGTH(0), attr.rta_len - RTA_LENGTH(0)), &link);
    rest = rest.subspan(std::min<size_t>(RTA_ALIGN(attr.rta_len), rest.size()));
  }
  return link;
}

}  // namespace

std::string_view OperstateName(uint8_t operstate) {
  static constexpr std::string_view kNames[] = {"unknown", "notpresent", "down", "lowerlayerdown",
                                                "testing", "dormant",    "up"};
  return operstate < std::size(kNames) ? kNames[operstate] : std::string_view();
}

Status ParseLinkDump(std::span<const uint8_t> datagram, uint32_t sequence,
                     std::vector<LinkAttributes>* links, LinkDumpProgress* progress) {
  while (datagram.size() >= sizeof(nlmsghdr)) {
    nlmsghdr header;
    std::memcpy(&header, datagram.data(), sizeof(header));
    if (header.nlmsg_len < sizeof(nlmsghdr) || header.nlmsg_len > datagram.size()) {
      return DataLossError("rtnetlink: message of " + std::to_string(header.nlmsg_len) +
                           " bytes in a datagram of " + std::to_string(datagram.size()));
    }
    const std::span<const uint8_t> body =
        datagram.subspan(NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN);
    datagram = datagram.subspan(std::min<size_t>(NLMSG_ALIGN(header.nlmsg_len), datagram.size()));
    if (header.nlmsg_seq != sequence) {
      continue;  // An answer to an earlier, abandoned dump.
    }
    if ((header.nlmsg_flags & NLM_F_DUMP_INTR) != 0) {
      progress->interrupted = true;
    }
    if (header.nlmsg_type == NLMSG_DONE) {
      progress->done = true;
      // The dump's own result (netlink_dump_done): an error ended it early, links missing.
      int result = 0;
      std::memcpy(&result, body.data(), std::min(body.size(), sizeof(result)));
      return result < 0 ? ErrnoStatus(-result, "rtnetlink: RTM_GETLINK dump") : OkStatus();
    }
    if (header.nlmsg_type == NLMSG_ERROR) {
      int error = 0;
      if (body.size() < sizeof(error)) {
        return DataLossError("rtnetlink: NLMSG_ERROR shorter than its error code");
      }
      std::memcpy(&error, body.data(), sizeof(error));
      return ErrnoStatus(error < 0 ? -error : EIO, "rtnetlink: RTM_GETLINK");
    }
    if (header.nlmsg_type != RTM_NEWLINK) {
      continue;
    }
    if (links->size() >= LinkDumper::kMaxLinks) {
      return ResourceExhaustedError("rtnetlink: more than " +
                                    std::to_string(LinkDumper::kMaxLinks) + " links");
    }
    StatusOr<LinkAttributes> link = ParseNewLink(body);
    if (!link.ok()) {
      return link.status();
    }
    links->push_back(std::move(*link));
  }
  return OkStatus();
}

LinkDumper::~LinkDumper() { Close(); }

void LinkDumper::Close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

Status LinkDumper::Open() {
  fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd_ < 0) {
    return ErrnoStatus(errno, "rtnetlink: socket");
  }
  const timeval deadline{1, 0};  // The kernel answers at once; never wait longer than this.
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &deadline, sizeof(deadline));
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &deadline, sizeof(deadline));
  buffer_.resize(32768);  // The kernel fills at most this much per datagram (NLMSG_GOODSIZE).
  return OkStatus();
}

Status LinkDumper::DumpOnce(std::vector<LinkAttributes>* links, LinkDumpProgress* progress) {
  struct {
    nlmsghdr header;
    ifinfomsg info;
  } request{};
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg));
  request.header.nlmsg_type = RTM_GETLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = ++sequence_;
  request.info.ifi_family = AF_UNSPEC;
  if (::send(fd_, &request, request.header.nlmsg_len, 0) < 0) {
    return ErrnoStatus(errno, "rtnetlink: send RTM_GETLINK");
  }
  size_t received = 0;
  while (!progress->done) {
    const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_TRUNC);
    if (n < 0 && errno == EINTR) {
      continue;  // A stop and continue (SIGSTOP, a debugger) interrupts a timed receive.
    }
    if (n < 0) {
      return errno == EAGAIN ? DeadlineExceededError("rtnetlink: no answer within 1 s")
                             : ErrnoStatus(errno, "rtnetlink: recv");
    }
    if (static_cast<size_t>(n) > buffer_.size()) {
      return DataLossError("rtnetlink: a datagram of " + std::to_string(n) + " bytes was cut");
    }
    received += static_cast<size_t>(n);
    if (received > kMaxAnswerBytes) {
      return ResourceExhaustedError("rtnetlink: the link dump passed " +
                                    std::to_string(kMaxAnswerBytes >> 20) + " MiB");
    }
    VIGIL_RETURN_IF_ERROR(
        ParseLinkDump(std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)), sequence_,
                      links, progress));
  }
  return OkStatus();
}

StatusOr<std::vector<LinkAttributes>> LinkDumper::Dump() {
  if (fd_ < 0) {
    return FailedPreconditionError("rtnetlink: the socket is not open");
  }
  std::vector<LinkAttributes> links;
  for (int attempt = 0;; ++attempt) {
    links.clear();
    LinkDumpProgress progress;
    Status s = DumpOnce(&links, &progress);
    if (!s.ok()) {
      // The kernel may still be running the broken dump (a new request would be EBUSY): this
      // socket is done with. Open() starts afresh.
      Close();
      return s;
    }
    if (!progress.interrupted || attempt == 1) {
      return links;
    }
  }
}

}  // namespace vigil
