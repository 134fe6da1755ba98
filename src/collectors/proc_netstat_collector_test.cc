// SPDX-License-Identifier: Apache-2.0
#include "collectors/proc_netstat_collector.h"

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::ScratchTree;

const Labels kV4 = {{"ip_version", "4"}};
const Labels kV6 = {{"ip_version", "6"}};

constexpr char kSnmp[] =
    "Ip: Forwarding DefaultTTL InReceives\n"
    "Ip: 1 64 100\n"
    "Icmp: InMsgs InErrors InCsumErrors OutMsgs\n"
    "Icmp: 11 12 13 14\n"
    "Tcp: RtoAlgorithm MaxConn InSegs InErrs\n"
    "Tcp: 1 -1 900 21\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n"
    "Udp: 31 32 33 34 35 36\n"
    "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n"
    "UdpLite: 0 0 41 0 0 0\n";
constexpr char kNetstat[] =
    "TcpExt: SyncookiesSent SyncookiesRecv SyncookiesFailed TCPTimeouts TCPSynRetrans TCPOFOQueue\n"
    "TcpExt: 51 52 53 54 55 56\n"
    "IpExt: InNoRoutes InOctets OutOctets\n"
    "IpExt: 0 61000000000 62000000000\n";

TEST(ProcNetstatCollectorTest, ReadsCapturedKernel618) {
  ProcNetstatCollector collector(FixturePaths("debian12_k618_vm"));

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_ip_forwarding"), 0);  // Forwarding 2: not a router.
  EXPECT_EQ(FindValue(b, "vigil_host_ip_received_bytes_total", kV4), 198084318);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_sent_bytes_total", kV4), 105755);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_received_bytes_total", kV6), 128);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_sent_bytes_total", kV6), 880);
  EXPECT_EQ(FindValue(b, "vigil_host_icmp_in_messages_total", kV4), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_icmp_out_messages_total", kV6), 9);
  EXPECT_EQ(FindValue(b, "vigil_host_icmp_in_errors_total", kV6), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_in_datagrams_total", kV4), 23);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_out_datagrams_total", kV4), 24);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_timeouts_total"), 2);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_out_of_order_queued_total"), 0);
  EXPECT_EQ(CountSamples(b, "vigil_host_udp_in_datagrams_total"), 2u);
  EXPECT_EQ(CountSamples(b, "vigil_host_udplite_in_errors_total"), 2u);
}

TEST(ProcNetstatCollectorTest, EveryCounterComesFromItsColumn) {
  ScratchTree tree;
  tree.Write("proc/net/snmp", kSnmp);
  tree.Write("proc/net/netstat", kNetstat);
  ProcNetstatCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_ip_forwarding"), 1);
  EXPECT_EQ(FindValue(b, "vigil_host_icmp_in_messages_total", kV4), 11);
  EXPECT_EQ(FindValue(b, "vigil_host_icmp_in_errors_total", kV4), 12);
  EXPECT_EQ(FindValue(b, "vigil_host_icmp_out_messages_total", kV4), 14);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_in_errors_total"), 21);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_in_datagrams_total", kV4), 31);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_no_port_total", kV4), 32);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_in_errors_total", kV4), 33);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_out_datagrams_total", kV4), 34);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_receive_buffer_errors_total", kV4), 35);
  EXPECT_EQ(FindValue(b, "vigil_host_udp_send_buffer_errors_total", kV4), 36);
  EXPECT_EQ(FindValue(b, "vigil_host_udplite_in_errors_total", kV4), 41);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_syncookies_sent_total"), 51);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_syncookies_received_total"), 52);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_syncookies_failed_total"), 53);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_timeouts_total"), 54);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_syn_retransmits_total"), 55);
  EXPECT_EQ(FindValue(b, "vigil_host_tcp_out_of_order_queued_total"), 56);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_received_bytes_total", kV4), 61e9);
  EXPECT_EQ(FindValue(b, "vigil_host_ip_sent_bytes_total", kV4), 62e9);
  // No net/snmp6 (IPv6 disabled): no IPv6 series, and that is not an error.
  EXPECT_FALSE(FindValue(b, "vigil_host_udp_in_datagrams_total", kV6));
}

TEST(ProcNetstatCollectorTest, MissingNetstatKeepsSnmpAndIsAFailure) {
  ScratchTree tree;
  tree.Write("proc/net/snmp", kSnmp);
  ProcNetstatCollector collector(tree.paths());

  auto r = CollectOnce(collector);

  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(IsAbsent(r.status)) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_udp_no_port_total", kV4), 32);
}

TEST(ProcNetstatCollectorTest, MalformedFilesAreDataLoss) {
  ScratchTree tree;
  tree.Write("proc/net/snmp", "Udp: InDatagrams NoPorts\nUdp: 1\n");
  ProcNetstatCollector short_values(tree.paths());
  EXPECT_EQ(CollectOnce(short_values).status.code(), StatusCode::kDataLoss);

  tree.Write("proc/net/snmp", kSnmp);
  tree.Write("proc/net/netstat", kNetstat);
  tree.Write("proc/net/snmp6", "Udp6InDatagrams   x1\n");
  ProcNetstatCollector bad_snmp6(tree.paths());
  auto r = CollectOnce(bad_snmp6);
  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status.message().find("snmp6"), std::string::npos) << r.status.message();
}

TEST(ProcNetstatCollectorTest, MissingSnmpIsAbsent) {
  ScratchTree tree;
  ProcNetstatCollector collector(tree.paths());

  EXPECT_TRUE(IsAbsent(CollectOnce(collector).status));
}

}  // namespace
}  // namespace vigil
