// SPDX-License-Identifier: Apache-2.0
#include "collectors/clock_time_collector.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "collectors/host_test_util.h"

namespace vigil {
namespace {

using testing::CollectOnce;
using testing::CountSamples;
using testing::FindValue;
using testing::FixturePaths;
using testing::MustFind;
using testing::ScratchTree;

// A chrony-disciplined clock: nanosecond mode, 2.5 ms offset, +12.5 ppm, PLL constant 7.
int SyncedNanoClock(struct timex* tx) {
  tx->status = STA_PLL | STA_NANO;
  tx->offset = 2500000;  // ns
  tx->freq = 12 * 65536 + 32768;
  tx->maxerror = 16000;  // µs
  tx->esterror = 250;
  tx->constant = 7;
  tx->tick = 10000;
  tx->ppsfreq = -65536;
  tx->jitter = 1000;
  tx->shift = 4;
  tx->stabil = 131072;
  tx->jitcnt = 3;
  tx->calcnt = 4;
  tx->errcnt = 5;
  tx->stbcnt = 6;
  tx->tai = 37;
  return TIME_OK;
}

// An unsynchronised clock in microsecond mode.
int UnsyncedMicroClock(struct timex* tx) {
  tx->status = STA_UNSYNC;
  tx->offset = -1500;  // µs
  tx->maxerror = 16000000;
  return TIME_ERROR;
}

int BlockedAdjtimex(struct timex*) {
  errno = EPERM;
  return -1;
}

TEST(ClockTimeCollectorTest, ConvertsAdjtimexFields) {
  ClockTimeCollector collector(FixturePaths("debian12_k618_vm"), {.adjtimex = &SyncedNanoClock});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_EQ(FindValue(b, "vigil_host_timex_synchronized"), 1);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_offset_seconds"), 0.0025);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_frequency_adjustment_ratio"), 1 + 12.5e-6);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_max_error_seconds"), 0.016);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_estimated_error_seconds"), 0.00025);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_status"), STA_PLL | STA_NANO);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_loop_time_constant"), 7);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_tick_seconds"), 0.01);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_pps_frequency_ratio"), -1e-6);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_pps_jitter_seconds"), 1e-6);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_pps_interval_seconds"), 16);
  EXPECT_DOUBLE_EQ(MustFind(b, "vigil_host_timex_pps_stability_ratio"), 2e-6);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_pps_jitter_limit_exceeded_total"), 3);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_pps_calibrations_total"), 4);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_pps_errors_total"), 5);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_pps_stability_exceeded_total"), 6);
  EXPECT_EQ(FindValue(b, "vigil_host_timex_tai_offset_seconds"), 37);
}

TEST(ClockTimeCollectorTest, UnsyncedMicrosecondClock) {
  ClockTimeCollector collector(FixturePaths("debian12_k618_vm"), {.adjtimex = &UnsyncedMicroClock});

  auto r = CollectOnce(collector);

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_timex_synchronized"), 0);
  EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_timex_offset_seconds"), -0.0015);
  EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_timex_max_error_seconds"), 16);
}

TEST(ClockTimeCollectorTest, WallTimeZoneAndClocksources) {
  setenv("TZ", "EST5", 1);  // POSIX TZ string: no time zone database needed.
  tzset();
  ClockTimeCollector collector(FixturePaths("debian12_k618_vm"), {.adjtimex = &SyncedNanoClock});

  auto r = CollectOnce(collector);
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  unsetenv("TZ");
  tzset();

  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto& b = r.batch;
  EXPECT_LT(std::abs(MustFind(b, "vigil_host_time_seconds") - now), 5.0);
  EXPECT_EQ(FindValue(b, "vigil_host_time_zone_offset_seconds", {{"time_zone", "EST"}}), -18000);
  EXPECT_EQ(CountSamples(b, "vigil_host_clocksource_available_info"), 2u);
  EXPECT_EQ(FindValue(b, "vigil_host_clocksource_available_info",
                      {{"clocksource", "kvm-clock"}, {"device", "clocksource0"}}),
            1);
  EXPECT_EQ(FindValue(b, "vigil_host_clocksource_current_info",
                      {{"clocksource", "tsc"}, {"device", "clocksource0"}}),
            1);
}

// The device list is kept between ticks; a device that went away makes the next tick list them
// again, so its replacement shows at once.
TEST(ClockTimeCollectorTest, AReplacedClocksourceDeviceShowsOnTheNextTick) {
  ScratchTree tree;
  const std::string dir = "sys/devices/system/clocksource/";
  tree.Write(dir + "clocksource0/available_clocksource", "tsc hpet\n");
  tree.Write(dir + "clocksource0/current_clocksource", "tsc\n");
  ClockTimeCollector collector(tree.paths(), {.adjtimex = &SyncedNanoClock});
  ASSERT_EQ(CountSamples(CollectOnce(collector).batch, "vigil_host_clocksource_available_info"),
            2u);

  std::filesystem::remove_all(tree.root() + "/" + dir + "clocksource0");
  tree.Write(dir + "clocksource1/current_clocksource", "tsc\n");
  const auto gone = CollectOnce(collector);
  const auto back = CollectOnce(collector);

  EXPECT_EQ(CountSamples(gone.batch, "vigil_host_clocksource_current_info"), 0u);
  EXPECT_EQ(FindValue(back.batch, "vigil_host_clocksource_current_info",
                      {{"clocksource", "tsc"}, {"device", "clocksource1"}}),
            1);
}

TEST(ClockTimeCollectorTest, RealAdjtimexAgreesWithTheSyscall) {
  ClockTimeCollector collector(HostPaths{});
  struct timex tx {};

  auto r = CollectOnce(collector);
  const int state = adjtimex(&tx);

  if (state < 0) {
    GTEST_SKIP() << "adjtimex is blocked here (errno " << errno << ")";
  }
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(FindValue(r.batch, "vigil_host_timex_synchronized"), state == TIME_ERROR ? 0 : 1);
  EXPECT_EQ(FindValue(r.batch, "vigil_host_timex_status"), tx.status);
  EXPECT_DOUBLE_EQ(MustFind(r.batch, "vigil_host_timex_tick_seconds"), tx.tick / 1e6);
}

TEST(ClockTimeCollectorTest, BlockedAdjtimexKeepsWallTimeAndSaysWhy) {
  ScratchTree tree;  // No clocksource directory either.
  ClockTimeCollector collector(tree.paths(), {.adjtimex = &BlockedAdjtimex});

  auto r = CollectOnce(collector);

  EXPECT_FALSE(r.status.ok());
  EXPECT_FALSE(IsAbsent(r.status));
  EXPECT_NE(r.status.message().find("adjtimex"), std::string::npos);
  EXPECT_TRUE(FindValue(r.batch, "vigil_host_time_seconds"));
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_clocksource_current_info"), 0u);
  EXPECT_EQ(CountSamples(r.batch, "vigil_host_timex_offset_seconds"), 0u);
}

}  // namespace
}  // namespace vigil
