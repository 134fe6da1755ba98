// SPDX-License-Identifier: Apache-2.0
// The dump parser on datagrams laid out by hand from rtnetlink(7) and include/uapi/linux/
// {netlink,rtnetlink,if_link}.h, and one real dump of this machine's links against if_nametoindex.
#include "collectors/rtnetlink_links.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cstring>

#include <gtest/gtest.h>

namespace vigil {
namespace {

constexpr unsigned kIffLowerUp = 1u << 16;  // IFF_LOWER_UP (linux/if.h; glibc's net/if.h lacks it).

// Appends netlink messages to one datagram, each padded to NLMSG_ALIGNTO as the kernel does.
class Datagram {
 public:
  // Starts a message; attributes go into it until the next Begin().
  Datagram& Begin(uint16_t type, uint32_t seq, uint16_t flags = NLM_F_MULTI) {
    Pad();
    start_ = bytes_.size();
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_seq = seq;
    h.nlmsg_flags = flags;
    return Raw(&h, sizeof(h));
  }
  Datagram& Link(int index, uint16_t type, uint32_t flags) {
    ifinfomsg info{};
    info.ifi_index = index;
    info.ifi_type = type;
    info.ifi_flags = flags;
    return Raw(&info, sizeof(info));
  }
  Datagram& Attr(uint16_t type, const void* data, size_t size) {
    Pad();
    rtattr a{};
    a.rta_type = type;
    a.rta_len = static_cast<uint16_t>(RTA_LENGTH(size));
    Append(&a, sizeof(a));
    Append(data, size);
    Close();
    return *this;
  }
  Datagram& U32(uint16_t type, uint32_t v) { return Attr(type, &v, sizeof(v)); }
  Datagram& U8(uint16_t type, uint8_t v) { return Attr(type, &v, sizeof(v)); }
  Datagram& Str(uint16_t type, const char* s) { return Attr(type, s, std::strlen(s) + 1); }
  Datagram& Raw(const void* data, size_t size) {
    Append(data, size);
    Close();
    return *this;
  }
  std::span<const uint8_t> Bytes() const { return bytes_; }

 private:
  void Append(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  void Pad() { bytes_.resize(NLMSG_ALIGN(bytes_.size())); }
  void Close() {  // The open message's length covers everything appended so far.
    const auto len = static_cast<uint32_t>(bytes_.size() - start_);
    std::memcpy(bytes_.data() + start_, &len, sizeof(len));
  }
  std::vector<uint8_t> bytes_;
  size_t start_ = 0;
};

TEST(RtnetlinkLinksTest, ReadsEveryAttributeSysNetclassUses) {
  rtnl_link_stats64 stats{};
  stats.rx_crc_errors = 7;
  stats.rx_frame_errors = 1;
  stats.rx_missed_errors = 11;
  stats.rx_nohandler = 5;
  stats.tx_carrier_errors = 2;
  stats.tx_window_errors = 3;
  const uint8_t mac[] = {0x0c, 0x42, 0xa1, 0x5e, 0x6f, 0x70};
  const uint8_t bcast[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  Datagram d;
  d.Begin(RTM_NEWLINK, 9)
      .Link(2, 1, IFF_UP | IFF_BROADCAST | IFF_RUNNING | kIffLowerUp)
      .Str(IFLA_IFNAME, "eth0")
      .Attr(IFLA_ADDRESS, mac, sizeof(mac))
      .Attr(IFLA_BROADCAST, bcast, sizeof(bcast))
      .Str(IFLA_IFALIAS, "uplink a")
      .U32(IFLA_MTU, 9000)
      .U32(IFLA_TXQLEN, 1000)
      .U32(IFLA_GROUP, 0)
      .U8(IFLA_OPERSTATE, 6)
      .U8(IFLA_LINKMODE, 0)
      .U8(IFLA_CARRIER, 1)
      .U32(IFLA_CARRIER_CHANGES, 3)
      .U32(IFLA_CARRIER_UP_COUNT, 2)
      .U32(IFLA_CARRIER_DOWN_COUNT, 1)
      .U8(IFLA_PROTO_DOWN, 0)
      .Attr(IFLA_STATS64, &stats, sizeof(stats));
  d.Begin(RTM_NEWLINK, 9)
      .Link(3, 32, 0)
      .Str(IFLA_IFNAME, "ib0")
      .U32(IFLA_LINK, 2)
      .U8(IFLA_OPERSTATE, 2);
  d.Begin(NLMSG_DONE, 9).Raw("\0\0\0\0", 4);
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  ASSERT_TRUE(ParseLinkDump(d.Bytes(), 9, &links, &progress).ok());

  EXPECT_TRUE(progress.done);
  EXPECT_FALSE(progress.interrupted);
  ASSERT_EQ(links.size(), 2u);
  const LinkAttributes& eth0 = links[0];
  EXPECT_EQ(eth0.index, 2);
  EXPECT_EQ(eth0.type, 1);
  EXPECT_EQ(eth0.flags, unsigned{IFF_UP | IFF_BROADCAST | IFF_RUNNING | kIffLowerUp});
  EXPECT_EQ(eth0.name, "eth0");
  EXPECT_EQ(eth0.address, "0c:42:a1:5e:6f:70");
  EXPECT_EQ(eth0.broadcast, "ff:ff:ff:ff:ff:ff");
  EXPECT_EQ(eth0.ifalias, "uplink a");
  EXPECT_EQ(eth0.link, std::nullopt);
  EXPECT_EQ(eth0.mtu, 9000u);
  EXPECT_EQ(eth0.tx_queue_len, 1000u);
  EXPECT_EQ(eth0.operstate, 6);
  EXPECT_EQ(OperstateName(*eth0.operstate), "up");
  EXPECT_EQ(eth0.carrier, 1);
  EXPECT_EQ(eth0.carrier_changes, 3u);
  EXPECT_EQ(eth0.carrier_up_count, 2u);
  EXPECT_EQ(eth0.carrier_down_count, 1u);
  ASSERT_TRUE(eth0.errors.has_value());
  EXPECT_EQ(eth0.errors->rx_crc_errors, 7u);
  EXPECT_EQ(eth0.errors->rx_frame_errors, 1u);
  EXPECT_EQ(eth0.errors->rx_missed_errors, 11u);
  EXPECT_EQ(eth0.errors->rx_nohandler, 5u);
  EXPECT_EQ(eth0.errors->tx_carrier_errors, 2u);
  EXPECT_EQ(eth0.errors->tx_window_errors, 3u);
  EXPECT_EQ(eth0.errors->rx_length_errors, 0u);
  const LinkAttributes& ib0 = links[1];
  EXPECT_EQ(ib0.name, "ib0");
  EXPECT_EQ(ib0.type, 32);
  EXPECT_EQ(ib0.link, 2u);
  EXPECT_EQ(OperstateName(*ib0.operstate), "down");
  EXPECT_EQ(ib0.address, "");
  EXPECT_EQ(ib0.mtu, std::nullopt);
  EXPECT_EQ(ib0.errors, std::nullopt);
}

TEST(RtnetlinkLinksTest, AnOlderKernelsShorterStatsLeaveTheLaterFieldsUnset) {
  rtnl_link_stats64 stats{};
  stats.rx_crc_errors = 4;
  stats.tx_window_errors = 6;
  // Before rx_nohandler (Linux 4.6) the struct ended after tx_compressed.
  const size_t old_size = offsetof(rtnl_link_stats64, rx_nohandler);
  Datagram d;
  d.Begin(RTM_NEWLINK, 1)
      .Link(2, 1, IFF_UP)
      .Str(IFLA_IFNAME, "eth0")
      .Attr(IFLA_STATS64, &stats, old_size);
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  ASSERT_TRUE(ParseLinkDump(d.Bytes(), 1, &links, &progress).ok());

  EXPECT_FALSE(progress.done);  // No NLMSG_DONE in this datagram: the dump goes on.
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].errors->rx_crc_errors, 4u);
  EXPECT_EQ(links[0].errors->tx_window_errors, 6u);
  EXPECT_EQ(links[0].errors->rx_nohandler, std::nullopt);
}

TEST(RtnetlinkLinksTest, SkipsOtherSequencesAndNotesAnInterruptedDump) {
  Datagram d;
  d.Begin(RTM_NEWLINK, 4).Link(7, 1, 0).Str(IFLA_IFNAME, "stale");  // A dump given up on.
  d.Begin(NLMSG_DONE, 4).Raw("\0\0\0\0", 4);
  d.Begin(RTM_NEWLINK, 5, NLM_F_MULTI | NLM_F_DUMP_INTR).Link(2, 1, 0).Str(IFLA_IFNAME, "eth0");
  d.Begin(NLMSG_DONE, 5).Raw("\0\0\0\0", 4);
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  ASSERT_TRUE(ParseLinkDump(d.Bytes(), 5, &links, &progress).ok());

  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].name, "eth0");
  EXPECT_TRUE(progress.done);
  EXPECT_TRUE(progress.interrupted);
}

TEST(RtnetlinkLinksTest, TheKernelsErrorIsItsErrno) {
  nlmsgerr error{};
  error.error = -EPERM;
  Datagram d;
  d.Begin(NLMSG_ERROR, 3, 0).Raw(&error, sizeof(error));
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  Status s = ParseLinkDump(d.Bytes(), 3, &links, &progress);

  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.message();
}

TEST(RtnetlinkLinksTest, ADumpEndedByAnErrorIsThatError) {
  const int result = -EMSGSIZE;  // netlink_dump_done: a link that did not fit an empty skb.
  Datagram d;
  d.Begin(RTM_NEWLINK, 2).Link(2, 1, 0).Str(IFLA_IFNAME, "eth0");
  d.Begin(NLMSG_DONE, 2).Raw(&result, sizeof(result));
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  Status s = ParseLinkDump(d.Bytes(), 2, &links, &progress);

  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("RTM_GETLINK"), std::string::npos) << s.message();
  // An error message too short to hold its code is DataLoss, not a read past it.
  Datagram shortened;
  shortened.Begin(NLMSG_ERROR, 2, 0).Raw("\xff\xff", 2);
  EXPECT_EQ(ParseLinkDump(shortened.Bytes(), 2, &links, &progress).code(), StatusCode::kDataLoss);
}

TEST(RtnetlinkLinksTest, AnAliasIsTrimmedAsSysfsTextIs) {
  Datagram d;
  d.Begin(RTM_NEWLINK, 1).Link(2, 1, 0).Str(IFLA_IFNAME, "eth0").Str(IFLA_IFALIAS, " x y \n");
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  ASSERT_TRUE(ParseLinkDump(d.Bytes(), 1, &links, &progress).ok());

  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].ifalias, "x y");
}

TEST(RtnetlinkLinksTest, AnAttributeOverrunningItsMessageIsDataLoss) {
  Datagram d;
  d.Begin(RTM_NEWLINK, 1).Link(2, 1, 0).Str(IFLA_IFNAME, "eth0");
  std::vector<uint8_t> bytes(d.Bytes().begin(), d.Bytes().end());
  // The name attribute claims 200 bytes; the message has a few.
  const size_t attr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  const uint16_t len = 200;
  std::memcpy(bytes.data() + attr, &len, sizeof(len));
  std::vector<LinkAttributes> links;
  LinkDumpProgress progress;

  EXPECT_EQ(ParseLinkDump(bytes, 1, &links, &progress).code(), StatusCode::kDataLoss);

  // A message longer than its datagram is DataLoss too.
  const uint32_t too_long = static_cast<uint32_t>(bytes.size() + 64);
  std::memcpy(bytes.data(), &too_long, sizeof(too_long));
  EXPECT_EQ(ParseLinkDump(bytes, 1, &links, &progress).code(), StatusCode::kDataLoss);
}

TEST(RtnetlinkLinksTest, ADumpOfThisMachineNamesEveryLinkByItsIndex) {
  LinkDumper dumper;
  const Status open = dumper.Open();
  if (!open.ok()) {
    GTEST_SKIP() << "no rtnetlink socket here: " << open.message();
  }

  StatusOr<std::vector<LinkAttributes>> links = dumper.Dump();

  ASSERT_TRUE(links.ok()) << links.status().message();
  ASSERT_FALSE(links->empty());
  bool loopback = false;
  size_t named = 0;
  for (const LinkAttributes& link : *links) {
    EXPECT_TRUE(link.mtu.has_value()) << link.name;
    loopback |= (link.flags & IFF_LOOPBACK) != 0;
    // 0: the interface went away since the dump (a container's veth on a busy host).
    if (const unsigned index = if_nametoindex(link.name.c_str()); index != 0) {
      EXPECT_EQ(static_cast<unsigned>(link.index), index) << link.name;
      ++named;
    }
  }
  EXPECT_TRUE(loopback);
  EXPECT_GT(named, 0u);
  // A second dump on the same socket is answered too (links may come and go in between).
  StatusOr<std::vector<LinkAttributes>> again = dumper.Dump();
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again->empty());
}

}  // namespace
}  // namespace vigil
