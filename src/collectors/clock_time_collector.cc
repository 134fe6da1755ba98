// SPDX-License-Identifier: Apache-2.0
#include "collectors/clock_time_collector.h"

#include <errno.h>
#include <time.h>

#include <cmath>
#include <utility>

#include "base/strings.h"
#include "collectors/collector_context.h"

namespace vigil {
namespace {

constexpr MetricKind kGauge = MetricKind::kGauge;
constexpr MetricKind kCounter = MetricKind::kCounter;

constexpr MetricDesc kTime{"vigil_host_time_seconds",
                           "Wall clock time, seconds since the Unix epoch.", kGauge, "seconds"};
constexpr MetricDesc kZoneOffset{"vigil_host_time_zone_offset_seconds",
                                 "Offset of the local time zone from UTC (east positive).", kGauge,
                                 "seconds"};
constexpr MetricDesc kClocksourceAvailable{"vigil_host_clocksource_available_info",
                                           "A clock source the kernel can use (always 1).", kGauge,
                                           "info"};
constexpr MetricDesc kClocksourceCurrent{"vigil_host_clocksource_current_info",
                                         "The clock source the kernel uses (always 1).", kGauge,
                                         "info"};
constexpr MetricDesc kSynchronized{"vigil_host_timex_synchronized",
                                   "1 when the kernel considers the clock synchronised, else 0.",
                                   kGauge, ""};
constexpr MetricDesc kOffset{"vigil_host_timex_offset_seconds",
                             "Time offset between the local clock and its reference.", kGauge,
                             "seconds"};
constexpr MetricDesc kFrequency{"vigil_host_timex_frequency_adjustment_ratio",
                                "Local clock frequency adjustment (1 = none).", kGauge, "ratio"};
constexpr MetricDesc kMaxError{"vigil_host_timex_max_error_seconds", "Maximum error estimate.",
                               kGauge, "seconds"};
constexpr MetricDesc kEstError{"vigil_host_timex_estimated_error_seconds",
                               "Estimated error of the clock.", kGauge, "seconds"};
constexpr MetricDesc kStatus{"vigil_host_timex_status", "Clock status bits (STA_* of adjtimex(2)).",
                             kGauge, ""};
constexpr MetricDesc kConstant{"vigil_host_timex_loop_time_constant",
                               "Phase-locked loop time constant.", kGauge, ""};
constexpr MetricDesc kTick{"vigil_host_timex_tick_seconds", "Length of a clock tick.", kGauge,
                           "seconds"};
constexpr MetricDesc kPpsFrequency{"vigil_host_timex_pps_frequency_ratio",
                                   "Frequency offset measured from the PPS signal.", kGauge,
                                   "ratio"};
constexpr MetricDesc kPpsJitter{"vigil_host_timex_pps_jitter_seconds", "PPS signal jitter.", kGauge,
                                "seconds"};
constexpr MetricDesc kPpsInterval{"vigil_host_timex_pps_interval_seconds",
                                  "PPS calibration interval.", kGauge, "seconds"};
constexpr MetricDesc kPpsStability{"vigil_host_timex_pps_stability_ratio",
                                   "PPS frequency stability.", kGauge, "ratio"};
constexpr MetricDesc kPpsJitterExceeded{"vigil_host_timex_pps_jitter_limit_exceeded_total",
                                        "PPS samples whose jitter exceeded the limit.", kCounter,
                                        ""};
constexpr MetricDesc kPpsCalibrations{"vigil_host_timex_pps_calibrations_total",
                                      "PPS calibration intervals completed.", kCounter, ""};
constexpr MetricDesc kPpsErrors{"vigil_host_timex_pps_errors_total", "PPS calibration errors.",
                                kCounter, ""};
constexpr MetricDesc kPpsStabilityExceeded{"vigil_host_timex_pps_stability_exceeded_total",
                                           "PPS samples whose stability exceeded the limit.",
                                           kCounter, ""};
constexpr MetricDesc kTaiOffset{"vigil_host_timex_tai_offset_seconds",
                                "Offset of International Atomic Time from UTC.", kGauge, "seconds"};

constexpr const MetricDesc* kMetrics[] = {&kTime,
                                          &kZoneOffset,
                                          &kClocksourceAvailable,
                                          &kClocksourceCurrent,
                                          &kSynchronized,
                                          &kOffset,
                                          &kFrequency,
                                          &kMaxError,
                                          &kEstError,
                                          &kStatus,
                                          &kConstant,
                                          &kTick,
                                          &kPpsFrequency,
                                          &kPpsJitter,
                                          &kPpsInterval,
                                          &kPpsStability,
                                          &kPpsJitterExceeded,
                                          &kPpsCalibrations,
                                          &kPpsErrors,
                                          &kPpsStabilityExceeded,
                                          &kTaiOffset};

// freq, ppsfreq and stabil are parts per million with a 16-bit fraction (adjtimex(2)).
constexpr double kScaledPpm = 65536e6;

std::unique_ptr<Collector> Create(const CollectorContext& context) {
  return std::make_unique<ClockTimeCollector>(context.paths);
}

}  // namespace

const CollectorInfo ClockTimeCollector::kInfo = {
    .name = "clock_time",
    .help = "Wall time, time zone, clock source and NTP discipline state (adjtimex).",
    .enabled_by_default = true,
    .metrics = kMetrics,
    .create = &Create,
};

ClockTimeCollector::ClockTimeCollector(HostPaths paths, ClockTimeOptions options)
    : paths_(std::move(paths)), options_(options) {}

void ClockTimeCollector::AddTimex(const struct timex& tx, int state, MetricWriter& out) {
  // offset and jitter are µs, or ns once STA_NANO is set; maxerror, esterror and tick are µs.
  const double unit = (tx.status & STA_NANO) ? 1e9 : 1e6;
  out.Add(kSynchronized, state == TIME_ERROR ? 0 : 1);
  out.Add(kOffset, static_cast<double>(tx.offset) / unit);
  out.Add(kFrequency, 1 + static_cast<double>(tx.freq) / kScaledPpm);
  out.Add(kMaxError, static_cast<double>(tx.maxerror) / 1e6);
  out.Add(kEstError, static_cast<double>(tx.esterror) / 1e6);
  out.Add(kStatus, static_cast<double>(tx.status));
  out.Add(kConstant, static_cast<double>(tx.constant));
  out.Add(kTick, static_cast<double>(tx.tick) / 1e6);
  out.Add(kPpsFrequency, static_cast<double>(tx.ppsfreq) / kScaledPpm);
  out.Add(kPpsJitter, static_cast<double>(tx.jitter) / unit);
  out.Add(kPpsInterval, std::ldexp(1.0, tx.shift));  // shift is log2 of the interval.
  out.Add(kPpsStability, static_cast<double>(tx.stabil) / kScaledPpm);
  out.Add(kPpsJitterExceeded, static_cast<double>(tx.jitcnt));
  out.Add(kPpsCalibrations, static_cast<double>(tx.calcnt));
  out.Add(kPpsErrors, static_cast<double>(tx.errcnt));
  out.Add(kPpsStabilityExceeded, static_cast<double>(tx.stbcnt));
  out.Add(kTaiOffset, static_cast<double>(tx.tai));
}

void ClockTimeCollector::CollectClocksources(MetricWriter& out) {
  const std::string dir = paths_.Sys("devices/system/clocksource");
  const Status listed = devices_schedule_.RescanIfDue([&]() -> Status {
    devices_.clear();
    StatusOr<std::vector<std::string>> devices = ListDir(dir);
    VIGIL_RETURN_IF_ERROR(devices.status());
    for (const std::string& device : *devices) {
      if (device.starts_with("clocksource")) {
        devices_.push_back(device);
      }
    }
    return OkStatus();
  });
  if (!listed.ok()) {
    return;  // No sysfs view (a container): clock sources are simply unknown.
  }
  for (const std::string& device : devices_) {
    const std::pair<const MetricDesc*, const char*> files[] = {
        {&kClocksourceAvailable, "available_clocksource"},
        {&kClocksourceCurrent, "current_clocksource"}};
    for (const auto& [desc, file] : files) {
      if (!files_.ReadInto(JoinPath(JoinPath(dir, device), file), &buf_).ok()) {
        devices_schedule_.Invalidate();  // The device went: list them again next tick.
        continue;
      }
      std::string_view rest = Trim(buf_);
      std::string_view name;
      for (int n = 0; n < 32 && NextField(&rest, &name); ++n) {
        out.Add(*desc, 1, {{"clocksource", SanitizeForLog(name, 64)}, {"device", device}});
      }
    }
  }
}

Status ClockTimeCollector::Collect(MetricWriter& out) {
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  out.Add(kTime, static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9);
  struct tm local {};
  const time_t seconds = now.tv_sec;
  if (localtime_r(&seconds, &local) != nullptr) {
    out.Add(kZoneOffset, static_cast<double>(local.tm_gmtoff),
            {{"time_zone", local.tm_zone != nullptr ? local.tm_zone : ""}});
  }
  CollectClocksources(out);
  struct timex tx {};
  tx.modes = 0;  // Read only.
  const int state = options_.adjtimex(&tx);
  if (state < 0) {
    // Samples are already written: a refusal (a seccomp filter) is a failure, not "absent".
    const Status s = ErrnoStatus(errno, "adjtimex");
    return IsAbsent(s) ? UnavailableError(s.message()) : s;
  }
  AddTimex(tx, state, out);
  return OkStatus();
}

}  // namespace vigil
