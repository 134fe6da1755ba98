// SPDX-License-Identifier: Apache-2.0
// The fake answers SIOCETHTOOL requests the way the kernel's net/ethtool/ioctl.c does: it reads
// the command word, fills struct ethtool_drvinfo / ethtool_gstrings / ethtool_stats from
// include/uapi/linux/ethtool.h (writing every name and value the NIC has, whatever count the
// caller passed, as the kernel does), and fails with the errno a real driver gives.
#include "collectors/sys_ethtool_collector.h"

#include <linux/ethtool.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;

struct FakeNic {
  std::string driver;
  std::vector<std::string> names;
  std::vector<uint64_t> values;
};

class FakeEthtool : public EthtoolIoctl {
 public:
  explicit FakeEthtool(std::map<std::string, FakeNic>* nics) : nics_(nics) {}
  Status Call(const std::string& ifname, void* data) override {
    ++calls_;
    auto it = nics_->find(ifname);
    if (it == nics_->end()) {
      return NotFoundError("SIOCETHTOOL " + ifname + ": no such device");
    }
    const FakeNic& nic = it->second;
    uint32_t cmd = 0;
    std::memcpy(&cmd, data, sizeof(cmd));
    const auto n = static_cast<uint32_t>(nic.names.size());
    switch (cmd) {
      case ETHTOOL_GDRVINFO: {
        auto* drv = static_cast<ethtool_drvinfo*>(data);
        std::strncpy(drv->driver, nic.driver.c_str(), sizeof(drv->driver) - 1);
        std::strncpy(drv->version, "6.1.0", sizeof(drv->version) - 1);
        std::strncpy(drv->fw_version, "28.39.1002", sizeof(drv->fw_version) - 1);
        std::strncpy(drv->bus_info, "0000:3b:00.0", sizeof(drv->bus_info) - 1);
        drv->n_stats = n;
        return OkStatus();
      }
      case ETHTOOL_GSTRINGS: {
        auto* s = static_cast<ethtool_gstrings*>(data);
        if (s->string_set != ETH_SS_STATS) {
          return InvalidArgumentError("bad string set");
        }
        s->len = n;  // As the kernel: every name the driver has now, whatever len asked for.
        for (uint32_t i = 0; i < n; ++i) {
          std::strncpy(reinterpret_cast<char*>(s->data) + i * ETH_GSTRING_LEN, nic.names[i].c_str(),
                       ETH_GSTRING_LEN);
        }
        return OkStatus();
      }
      case ETHTOOL_GSTATS: {
        auto* s = static_cast<ethtool_stats*>(data);
        s->n_stats = n;  // As the kernel: every value, whatever n_stats asked for.
        for (uint32_t i = 0; i < n; ++i) {
          s->data[i] = nic.values[i];
        }
        return OkStatus();
      }
      default:
        return UnimplementedError("unsupported ethtool command");
    }
  }
  int calls() const { return calls_; }

 private:
  std::map<std::string, FakeNic>* nics_;
  int calls_ = 0;
};

TEST(SysEthtoolCollectorTest, ExportsDriverStatisticsOfPhysicalInterfaces) {
  std::map<std::string, FakeNic> nics = {
      {"eth0",
       {"mlx5_core",
        {"rx_out_of_buffer", "rx_vport_rdma_unicast_bytes", "rx_prio3_pause",
         "tx_queue_0_xmit_more"},
        {17, 1ull << 40, 3, 99}}},
      {"ib0", {"ib_ipoib", {"rx_bytes"}, {1}}},  // No device/ link in sysfs: never asked.
  };
  auto fake = std::make_unique<FakeEthtool>(&nics);
  FakeEthtool* raw = fake.get();
  SysEthtoolCollector collector(FixturePaths("gpu_node_hw"), std::move(fake));

  auto r = CollectOnce(collector);

  // eth1 has a device link but the fake has no such NIC: NotFound, skipped.
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(MustFind(b, "vigil_host_ethtool_statistic_total",
                     {{"interface", "eth0"}, {"statistic", "rx_out_of_buffer"}}),
            17);
  EXPECT_EQ(MustFind(b, "vigil_host_ethtool_statistic_total",
                     {{"statistic", "rx_vport_rdma_unicast_bytes"}}),
            static_cast<double>(1ull << 40));
  EXPECT_EQ(CountSamples(b, "vigil_host_ethtool_statistic_total"), 4u);
  EXPECT_EQ(MustFind(b, "vigil_host_ethtool_info",
                     {{"interface", "eth0"},
                      {"driver", "mlx5_core"},
                      {"firmware_version", "28.39.1002"},
                      {"bus_info", "0000:3b:00.0"}}),
            1);
  EXPECT_EQ(FindValue(b, "vigil_host_ethtool_statistic_total", {{"interface", "ib0"}}),
            std::nullopt);

  // Later ticks: one GSTATS per interface, names are not fetched again.
  const int before = raw->calls();
  nics["eth0"].values[0] = 20;
  auto r2 = CollectOnce(collector);
  EXPECT_EQ(raw->calls() - before, 1);
  EXPECT_EQ(
      MustFind(r2.batch, "vigil_host_ethtool_statistic_total", {{"statistic", "rx_out_of_buffer"}}),
      20);
}

TEST(SysEthtoolCollectorTest, DriverReloadWithOtherCountsRescans) {
  std::map<std::string, FakeNic> nics = {{"eth0", {"ice", {"a", "b"}, {1, 2}}}};
  SysEthtoolCollector collector(FixturePaths("gpu_node_hw"), std::make_unique<FakeEthtool>(&nics));
  ASSERT_TRUE(CollectOnce(collector).status.ok());

  nics["eth0"] = {"ice", {"a", "b", "c"}, {1, 2, 3}};
  auto changed = CollectOnce(collector);
  EXPECT_EQ(CountSamples(changed.batch, "vigil_host_ethtool_statistic_total"), 0u);
  auto rescanned = CollectOnce(collector);
  EXPECT_EQ(MustFind(rescanned.batch, "vigil_host_ethtool_statistic_total", {{"statistic", "c"}}),
            3);
}

TEST(SysEthtoolCollectorTest, NoInterfaceWithStatisticsIsAbsent) {
  std::map<std::string, FakeNic> nics;
  SysEthtoolCollector collector(FixturePaths("gpu_node_hw"), std::make_unique<FakeEthtool>(&nics));

  EXPECT_EQ(CollectOnce(collector).status.code(), StatusCode::kNotFound);
}

TEST(SysEthtoolCollectorTest, AbsurdStatisticCountIsDataLoss) {
  std::map<std::string, FakeNic> nics = {{"eth0", {"bad", {}, {}}}};
  nics["eth0"].names.resize(SysEthtoolCollector::kMaxStats + 1);
  nics["eth0"].values.resize(SysEthtoolCollector::kMaxStats + 1);
  SysEthtoolCollector collector(FixturePaths("gpu_node_hw"), std::make_unique<FakeEthtool>(&nics));

  auto r = CollectOnce(collector);

  EXPECT_EQ(r.status.code(), StatusCode::kDataLoss) << r.status.message();
}

}  // namespace
}  // namespace vigil
