// SPDX-License-Identifier: Apache-2.0
// Counting CPU performance events with perf_event_open: groups per CPU (and per CPU and cgroup
// of interest, with PERF_FLAG_PID_CGROUP), each holding one PMU's events (hardware events at most
// four to a group so a group always fits the counters, software events all together; uncore PMUs
// on the CPUs of their cpumask). Groups are read with PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
// TOTAL_TIME_RUNNING; each interval's counts are scaled by Δtime_enabled / Δtime_running when the
// kernel multiplexed the group, and both times are kept. Every system call goes through
// PerfEventSys so tests replay recorded attrs and read() buffers. Thread-compatible.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "profile/pmu_events.h"

namespace vigil {

// The system calls PmuCounters makes. Each returns what the call returns, with -errno on failure.
class PerfEventSys {
 public:
  virtual ~PerfEventSys() = default;
  virtual int PerfEventOpen(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                            unsigned long flags) = 0;
  virtual ssize_t Read(int fd, void* buf, size_t size) = 0;
  virtual int Ioctl(int fd, unsigned long request, unsigned long arg) = 0;
  virtual int OpenDirectory(const std::string& path) = 0;  // A cgroup directory, O_RDONLY.
  virtual void Close(int fd) = 0;
};

// The kernel's.
PerfEventSys& RealPerfEventSys();

// One group's read() buffer with PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING:
// u64 nr, time_enabled, time_running, value[nr].
struct PerfGroupReading {
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
  std::vector<uint64_t> values;
};
// DataLoss when the buffer is short or nr differs from `expected_events`.
StatusOr<PerfGroupReading> ParsePerfGroupRead(std::span<const uint8_t> buf, size_t expected_events);

// One interval of one group: counts scaled by Δtime_enabled / Δtime_running. A group that did not
// run at all in the interval adds nothing (its counts are unknown, not zero) and has ratio 0.
struct ScaledDelta {
  std::vector<double> counts;  // Per event, already multiplied by the event's scale.
  uint64_t enabled_ns = 0;     // Δtime_enabled.
  uint64_t running_ns = 0;     // Δtime_running.
};
ScaledDelta ScalePerfDelta(const PerfGroupReading& before, const PerfGroupReading& after,
                           std::span<const double> event_scales);

struct PmuCounterOptions {
  std::vector<int> cpus;             // CPUs to count on (online CPUs).
  std::string cgroup_root;           // Where cgroups are mounted (<sys>/fs/cgroup).
  std::vector<std::string> cgroups;  // Cgroups of interest, relative to cgroup_root.
  size_t max_hardware_group = 4;     // Hardware events per group (core and uncore).
  size_t max_fds = 8192;             // Cap on open perf fds (cgroups beyond it are dropped).
};

// Where a count was taken. cgroup is an index into PmuCounterOptions::cgroups, -1 = whole CPU.
struct PmuTarget {
  int cpu = -1;
  int cgroup = -1;
  bool operator==(const PmuTarget&) const = default;
};

class PmuCounters {
 public:
  PmuCounters(std::vector<PmuEvent> events, PmuCounterOptions options, PerfEventSys* sys);
  ~PmuCounters();
  PmuCounters(const PmuCounters&) = delete;
  PmuCounters& operator=(const PmuCounters&) = delete;

  // Opens every group and enables it. OK when at least one event opened anywhere; otherwise the
  // first error (PermissionDenied for EACCES/EPERM, NotFound for an unsupported event).
  // Events the PMU refuses (ENOENT, EOPNOTSUPP, EINVAL) are dropped and listed in failures().
  Status Open();
  // Reads every group and accumulates this interval's scaled counts. A group whose read fails is
  // skipped this time (listed in the returned status, which is DataLoss then); the rest count.
  Status Read();

  const std::vector<PmuEvent>& events() const { return events_; }

  // One opened event at one target, after the last Read().
  struct Count {
    size_t event = 0;  // Index into events().
    PmuTarget target;
    double total = 0;         // Cumulative scaled count (times the event's scale).
    double last_delta = 0;    // The last interval's share of it.
    uint64_t enabled_ns = 0;  // The last interval's Δtime_enabled and Δtime_running of its group.
    uint64_t running_ns = 0;
    bool read = false;  // False until a Read() succeeded for its group.
  };
  // Group order: per CPU, system-wide groups first, then cgroups, then uncore PMUs.
  std::vector<Count> Counts() const;
  // Cumulative scaled count of `event` at `target` (nullopt: not opened there). Linear search.
  std::optional<double> Total(size_t event, PmuTarget target) const;
  // "event: reason" for events that could not be opened (once per event).
  const std::vector<std::string>& failures() const { return failures_; }
  size_t open_fds() const { return open_fds_; }
  size_t groups() const { return groups_.size(); }

 private:
  struct Group {
    PmuTarget target;
    std::vector<size_t> events;  // Indexes into events_, in read order.
    std::vector<int> fds;        // fds[0] is the leader.
    PerfGroupReading last;
    std::vector<double> totals;
    std::vector<double> last_delta;
    uint64_t enabled_ns = 0;
    uint64_t running_ns = 0;
    bool read = false;
  };
  // Opens `events` as one group at `target` (cgroup_fd >= 0 for a cgroup). Events the PMU
  // refuses are left out; a group with none left is not kept. Non-OK only for errors that stop
  // every further open (permission, descriptor limits).
  Status OpenGroup(PmuTarget target, int cgroup_fd, const std::vector<size_t>& events);
  void CloseAll();

  std::vector<PmuEvent> events_;
  PmuCounterOptions options_;
  PerfEventSys* sys_;
  std::vector<Group> groups_;
  std::vector<bool> refused_;  // Per event: the PMU refused it; not tried again.
  std::vector<std::string> failures_;
  std::vector<uint8_t> read_buf_;
  size_t open_fds_ = 0;
};

// The attr PmuCounters opens for `event` (leader: disabled until the group is enabled).
perf_event_attr PmuEventAttr(const PmuEvent& event, bool leader);

}  // namespace vigil
