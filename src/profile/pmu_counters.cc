// SPDX-License-Identifier: Apache-2.0
#include "profile/pmu_counters.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"

namespace vigil {
namespace {

constexpr uint64_t kReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
constexpr size_t kMaxGroupEvents = 64;

class KernelPerfEventSys : public PerfEventSys {
 public:
  int PerfEventOpen(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd,
                    unsigned long flags) override {
    const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
    return fd < 0 ? -errno : static_cast<int>(fd);
  }
  ssize_t Read(int fd, void* buf, size_t size) override {
    ssize_t n;
    do {
      n = read(fd, buf, size);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
  }
  int Ioctl(int fd, unsigned long request, unsigned long arg) override {
    return ioctl(fd, request, arg) < 0 ? -errno : 0;
  }
  int OpenDirectory(const std::string& path) override {
    const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
  }
  void Close(int fd) override { close(fd); }
};

// The PMU cannot count this event (on this CPU, or at all): drop it, keep the rest.
bool IsRefusal(int err) { return err == ENOENT || err == EOPNOTSUPP || err == EINVAL; }

std::string TargetName(PmuTarget t, const PmuCounterOptions& options) {
  if (t.cgroup < 0) {
    return fmt::format("cpu {}", t.cpu);
  }
  return fmt::format("cpu {} cgroup {}", t.cpu, options.cgroups[static_cast<size_t>(t.cgroup)]);
}

}  // namespace

PerfEventSys& RealPerfEventSys() {
  static KernelPerfEventSys* sys = new KernelPerfEventSys();
  return *sys;
}

StatusOr<PerfGroupReading> ParsePerfGroupRead(std::span<const uint8_t> buf,
                                              size_t expected_events) {
  auto word = [&](size_t i) {
    uint64_t v;
    std::memcpy(&v, buf.data() + i * sizeof(uint64_t), sizeof v);
    return v;
  };
  if (buf.size() < 3 * sizeof(uint64_t)) {
    return DataLossError(fmt::format("perf group read: {} bytes, need at least 24", buf.size()));
  }
  const uint64_t nr = word(0);
  if (nr != expected_events) {
    return DataLossError(
        fmt::format("perf group read: {} events, expected {}", nr, expected_events));
  }
  if (buf.size() < (3 + nr) * sizeof(uint64_t)) {
    return DataLossError(fmt::format("perf group read: {} bytes for {} events", buf.size(), nr));
  }
  PerfGroupReading r;
  r.time_enabled = word(1);
  r.time_running = word(2);
  r.values.reserve(nr);
  for (size_t i = 0; i < nr; ++i) {
    r.values.push_back(word(3 + i));
  }
  return r;
}

ScaledDelta ScalePerfDelta(const PerfGroupReading& before, const PerfGroupReading& after,
                           std::span<const double> event_scales) {
  // Counters only go backwards when a group was re-created: count from zero then.
  auto delta = [](uint64_t b, uint64_t a) { return a >= b ? a - b : a; };
  ScaledDelta out;
  out.enabled_ns = delta(before.time_enabled, after.time_enabled);
  out.running_ns = delta(before.time_running, after.time_running);
  out.counts.assign(after.values.size(), 0);
  if (out.running_ns == 0) {
    return out;
  }
  const double factor = out.running_ns >= out.enabled_ns ? 1.0
                                                         : static_cast<double>(out.enabled_ns) /
                                                               static_cast<double>(out.running_ns);
  for (size_t i = 0; i < after.values.size(); ++i) {
    const uint64_t b = i < before.values.size() ? before.values[i] : 0;
    const double scale = i < event_scales.size() ? event_scales[i] : 1.0;
    out.counts[i] = static_cast<double>(delta(b, after.values[i])) * factor * scale;
  }
  return out;
}

perf_event_attr PmuEventAttr(const PmuEvent& event, bool leader) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = event.type;
  attr.config = event.config;
  attr.config1 = event.config1;
  attr.config2 = event.config2;
  attr.read_format = kReadFormat;
  attr.disabled = leader ? 1 : 0;  // The whole group starts at once (PERF_EVENT_IOC_ENABLE).
  return attr;
}

PmuCounters::PmuCounters(std::vector<PmuEvent> events, PmuCounterOptions options, PerfEventSys* sys)
    : events_(std::move(events)),
      options_(std::move(options)),
      sys_(sys),
      refused_(events_.size(), false) {}

PmuCounters::~PmuCounters() { CloseAll(); }

void PmuCounters::CloseAll() {
  for (Group& g : groups_) {
    for (auto it = g.fds.rbegin(); it != g.fds.rend(); ++it) {
      sys_->Close(*it);
    }
  }
  groups_.clear();
  open_fds_ = 0;
}

Status PmuCounters::OpenGroup(PmuTarget target, int cgroup_fd, const std::vector<size_t>& events) {
  Group g;
  g.target = target;
  const pid_t pid = cgroup_fd >= 0 ? cgroup_fd : -1;
  const unsigned long flags = PERF_FLAG_FD_CLOEXEC | (cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0);
  for (size_t e : events) {
    if (refused_[e]) {
      continue;
    }
    if (open_fds_ + g.fds.size() >= options_.max_fds) {
      break;
    }
    const bool leader = g.fds.empty();
    const perf_event_attr attr = PmuEventAttr(events_[e], leader);
    const int fd = sys_->PerfEventOpen(attr, pid, target.cpu, leader ? -1 : g.fds[0], flags);
    if (fd >= 0) {
      g.fds.push_back(fd);
      g.events.push_back(e);
      continue;
    }
    const int err = -fd;
    const std::string where = TargetName(target, options_);
    if (IsRefusal(err)) {
      refused_[e] = true;
      failures_.push_back(events_[e].name + ": " + ErrnoStatus(err, "perf_event_open").message());
      continue;
    }
    if (err == ENODEV) {
      break;  // The CPU went offline: skip the group.
    }
    Status s = ErrnoStatus(err, fmt::format("perf_event_open {} on {}", events_[e].name, where));
    for (auto it = g.fds.rbegin(); it != g.fds.rend(); ++it) {
      sys_->Close(*it);
    }
    return s;
  }
  if (g.fds.empty()) {
    return OkStatus();
  }
  sys_->Ioctl(g.fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
  sys_->Ioctl(g.fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  open_fds_ += g.fds.size();
  g.totals.assign(g.events.size(), 0);
  g.last_delta.assign(g.events.size(), 0);
  g.last.values.assign(g.events.size(), 0);
  groups_.push_back(std::move(g));
  return OkStatus();
}

Status PmuCounters::Open() {
  CloseAll();
  failures_.clear();
  // Per-CPU events in groups of one PMU each (a group may not mix PMUs), PMUs in the order their
  // first event was listed; uncore events by PMU.
  std::vector<std::pair<std::string, std::vector<std::vector<size_t>>>> core;
  std::map<std::string, std::vector<size_t>> uncore;
  const size_t chunk = std::max<size_t>(1, std::min(options_.max_hardware_group, kMaxGroupEvents));
  for (size_t i = 0; i < events_.size(); ++i) {
    const PmuEvent& e = events_[i];
    if (e.scope == PmuEventScope::kUncore) {
      uncore[e.pmu].push_back(i);
      continue;
    }
    auto it =
        std::find_if(core.begin(), core.end(), [&](const auto& p) { return p.first == e.pmu; });
    if (it == core.end()) {
      it = core.insert(core.end(), {e.pmu, {}});
    }
    // Software events never compete for counters: one group holds them all.
    const size_t limit = e.hardware ? chunk : kMaxGroupEvents;
    if (it->second.empty() || it->second.back().size() >= limit) {
      it->second.emplace_back();
    }
    it->second.back().push_back(i);
  }
  auto open_core = [&](PmuTarget target, int cgroup_fd) -> Status {
    for (const auto& [pmu, groups] : core) {
      for (const std::vector<size_t>& g : groups) {
        VIGIL_RETURN_IF_ERROR(OpenGroup(target, cgroup_fd, g));
      }
    }
    return OkStatus();
  };
  Status stop;
  for (int cpu : options_.cpus) {
    stop = open_core({cpu, -1}, -1);
    if (!stop.ok()) {
      break;
    }
  }
  for (size_t c = 0; stop.ok() && c < options_.cgroups.size(); ++c) {
    const std::string path = JoinPath(options_.cgroup_root, options_.cgroups[c]);
    const int fd = sys_->OpenDirectory(path);
    if (fd < 0) {
      failures_.push_back("cgroup " + options_.cgroups[c] + ": " +
                          ErrnoStatus(-fd, "open " + path).message());
      continue;
    }
    for (int cpu : options_.cpus) {
      stop = open_core({cpu, static_cast<int>(c)}, fd);
      if (!stop.ok()) {
        break;
      }
    }
    sys_->Close(fd);  // Each perf event holds its own reference to the cgroup.
  }
  // Uncore PMUs have few counters too (four on an IMC channel and on AMD's data fabric).
  for (auto& [pmu, members] : uncore) {
    for (int cpu : events_[members[0]].cpus) {
      for (size_t first = 0; stop.ok() && first < members.size(); first += chunk) {
        const size_t last = std::min(members.size(), first + chunk);
        stop = OpenGroup({cpu, -1}, -1,
                         std::vector<size_t>(members.begin() + static_cast<ptrdiff_t>(first),
                                             members.begin() + static_cast<ptrdiff_t>(last)));
      }
    }
  }
  if (open_fds_ >= options_.max_fds) {
    failures_.push_back(fmt::format("stopped at {} open perf events (the cap)", options_.max_fds));
  }
  if (groups_.empty()) {
    if (!stop.ok()) {
      return stop;
    }
    return NotFoundError(failures_.empty() ? std::string("no PMU events to open")
                                           : "no PMU event could be opened: " + failures_[0]);
  }
  if (!stop.ok()) {
    failures_.push_back(stop.message());
  }
  return OkStatus();
}

Status PmuCounters::Read() {
  std::string errors;
  size_t failed = 0;
  for (Group& g : groups_) {
    const size_t n = g.events.size();
    read_buf_.resize((3 + n) * sizeof(uint64_t));
    const ssize_t got = sys_->Read(g.fds[0], read_buf_.data(), read_buf_.size());
    StatusOr<PerfGroupReading> now =
        got < 0 ? StatusOr<PerfGroupReading>(ErrnoStatus(static_cast<int>(-got), "read"))
                : ParsePerfGroupRead(
                      std::span<const uint8_t>(read_buf_.data(), static_cast<size_t>(got)), n);
    if (!now.ok()) {
      if (++failed == 1) {
        errors = TargetName(g.target, options_) + ": " + now.status().message();
      }
      continue;
    }
    double scales[kMaxGroupEvents];
    for (size_t i = 0; i < n && i < kMaxGroupEvents; ++i) {
      scales[i] = events_[g.events[i]].scale;
    }
    ScaledDelta d = ScalePerfDelta(g.last, *now, std::span<const double>(scales, n));
    for (size_t i = 0; i < n; ++i) {
      g.totals[i] += d.counts[i];
      g.last_delta[i] = d.counts[i];
    }
    g.enabled_ns = d.enabled_ns;
    g.running_ns = d.running_ns;
    g.read = true;
    g.last = std::move(*now);
  }
  if (failed > 0) {
    return DataLossError(
        fmt::format("{} of {} perf groups could not be read ({})", failed, groups_.size(), errors));
  }
  return OkStatus();
}

std::vector<PmuCounters::Count> PmuCounters::Counts() const {
  std::vector<Count> out;
  for (const Group& g : groups_) {
    for (size_t i = 0; i < g.events.size(); ++i) {
      Count c;
      c.event = g.events[i];
      c.target = g.target;
      c.total = g.totals[i];
      c.last_delta = g.last_delta[i];
      c.enabled_ns = g.enabled_ns;
      c.running_ns = g.running_ns;
      c.read = g.read;
      out.push_back(c);
    }
  }
  return out;
}

std::optional<double> PmuCounters::Total(size_t event, PmuTarget target) const {
  for (const Group& g : groups_) {
    if (g.target != target) {
      continue;
    }
    for (size_t i = 0; i < g.events.size(); ++i) {
      if (g.events[i] == event) {
        return g.totals[i];
      }
    }
  }
  return std::nullopt;
}

}  // namespace vigil
