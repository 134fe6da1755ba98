// SPDX-License-Identifier: Apache-2.0
#include "daemon/scheduler.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "base/logging.h"
#include "base/time_util.h"

namespace vigil::daemon {
namespace {

constexpr MetricDesc kSuccess{"vigil_collector_success",
                              "1 when the collector's last run succeeded, else 0.",
                              MetricKind::kGauge, ""};
constexpr MetricDesc kDuration{"vigil_collector_duration_seconds",
                               "How long the collector's last run took.", MetricKind::kGauge,
                               "seconds"};
constexpr MetricDesc kCpu{"vigil_collector_cpu_seconds_total",
                          "CPU time the collector's runs took on their thread, summed.",
                          MetricKind::kCounter, "seconds"};
constexpr MetricDesc kSamples{"vigil_collector_samples",
                              "Samples the collector's last run produced.", MetricKind::kGauge, ""};

constexpr int64_t kWarnEveryNs = 60 * kNanosPerSecond;
constexpr int64_t kMaxWaitNs = 60 * kNanosPerSecond;

// CPU time of the calling thread (user + system), the cost of a collector run.
int64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

class RealClock : public Clock {
 public:
  int64_t UnixNanos() const override { return vigil::UnixNanos(); }
  int64_t MonotonicNanos() const override { return vigil::MonotonicNanos(); }
};

}  // namespace

const Clock& SystemClock() {
  static const RealClock clock;
  return clock;
}

int64_t NextAlignedTick(int64_t now_ns, int64_t interval_ns) {
  if (interval_ns <= 0) {
    return now_ns;
  }
  int64_t rem = now_ns % interval_ns;
  if (rem < 0) {
    rem += interval_ns;
  }
  return now_ns + (interval_ns - rem);
}

std::string_view CollectorStateName(CollectorState state) {
  switch (state) {
    case CollectorState::kPending:
      return "pending";
    case CollectorState::kOk:
      return "ok";
    case CollectorState::kAbsent:
      return "absent";
    case CollectorState::kFailed:
      return "failed";
    case CollectorState::kDisabled:
      return "disabled";
  }
  return "failed";
}

Scheduler::Scheduler(const Clock* clock, BatchConsumer consumer)
    : clock_(clock), consumer_(std::move(consumer)) {}

Scheduler::~Scheduler() { Stop(); }

void Scheduler::Add(std::string name, CollectorFactory factory, int64_t interval_ns, bool enabled) {
  auto entry = std::make_unique<Entry>();
  entry->factory = std::move(factory);
  entry->health.name = std::move(name);
  entry->health.interval_ns = interval_ns;
  entry->health.state = enabled ? CollectorState::kPending : CollectorState::kDisabled;
  entry->enabled = enabled;
  std::lock_guard lock(mu_);
  entries_.push_back(std::move(entry));
}

Status Scheduler::Configure(std::string_view name, int64_t interval_ns, bool enabled) {
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const auto& e) { return e->health.name == name; });
    if (it == entries_.end()) {
      return NotFoundError("no collector named " + std::string(name));
    }
    Entry& e = **it;
    if (e.enabled == enabled && e.health.interval_ns == interval_ns) {
      return OkStatus();
    }
    if (enabled && !e.enabled) {
      e.next_due_ns = 0;  // Run at the next pass.
      e.health.state = CollectorState::kPending;
    } else if (!enabled) {
      e.health.state = CollectorState::kDisabled;
      e.health.message.clear();
    } else {
      e.next_due_ns = NextAlignedTick(clock_->UnixNanos(), interval_ns);
    }
    e.enabled = enabled;
    e.health.interval_ns = interval_ns;
    wake_ = true;
  }
  cv_.notify_all();
  return OkStatus();
}

void Scheduler::RunOne(Entry& entry) {
  if (!entry.instance) {
    entry.instance = entry.factory ? entry.factory() : nullptr;
  }
  auto batch = std::make_shared<MetricBatch>();
  int64_t interval_ns = 0;
  {
    std::lock_guard lock(mu_);
    batch->source = entry.health.name;
    interval_ns = entry.health.interval_ns;
  }
  // Stamp the batch with its tick on the wall-clock grid, not the jittery read time: a series
  // with regular timestamps costs one bit per point in the store instead of about 26.
  const int64_t read_ns = clock_->UnixNanos();
  batch->time_ns = interval_ns > 0 ? read_ns - read_ns % interval_ns : read_ns;
  if (batch->time_ns <= entry.last_batch_ns) {
    batch->time_ns = read_ns > entry.last_batch_ns ? read_ns : entry.last_batch_ns + 1;
  }
  entry.last_batch_ns = batch->time_ns;
  MetricWriter writer(batch.get());
  const int64_t start = clock_->MonotonicNanos();
  const int64_t cpu_start = ThreadCpuNanos();
  Status s = InternalError("collector could not be created");
  if (entry.instance) {
    // Collectors return Status; a third-party exception escaping one still only fails that run.
    try {
      s = entry.instance->Collect(writer);
    } catch (const std::exception& e) {
      s = InternalError(std::string("exception: ") + e.what());
    } catch (...) {
      s = InternalError("unknown exception");
    }
  }
  const int64_t duration_ns = clock_->MonotonicNanos() - start;
  entry.cpu_ns += ThreadCpuNanos() - cpu_start;
  const size_t samples = batch->samples.size();
  const std::string& name = batch->source;
  batch->complete = s.ok() || IsAbsent(s);
  writer.Add(kSuccess, s.ok() ? 1 : 0, {{"collector", name}});
  writer.Add(kDuration, static_cast<double>(duration_ns) / 1e9, {{"collector", name}});
  writer.Add(kSamples, static_cast<double>(samples), {{"collector", name}});
  writer.Add(kCpu, static_cast<double>(entry.cpu_ns) / 1e9, {{"collector", name}});

  CollectorState state = CollectorState::kOk;
  if (s.ok()) {
    entry.absent_logged = false;
  } else if (IsAbsent(s)) {
    state = CollectorState::kAbsent;
    if (!entry.absent_logged) {
      VIGIL_LOG_DEBUG("collector has no data on this host: collector={} reason={}", name,
                      s.message());
      entry.absent_logged = true;
    }
  } else {
    state = CollectorState::kFailed;
  }
  {
    std::lock_guard lock(mu_);
    const bool newly_failed =
        state == CollectorState::kFailed &&
        (entry.health.state != CollectorState::kFailed || entry.health.message != s.message());
    const int64_t now_mono = clock_->MonotonicNanos();
    if (state == CollectorState::kFailed &&
        (newly_failed || now_mono - entry.last_warn_mono_ns >= kWarnEveryNs)) {
      VIGIL_LOG_WARN("collector failed: collector={} err={}", name, s.ToString());
      entry.last_warn_mono_ns = now_mono;
    }
    if (state == CollectorState::kOk && entry.health.state == CollectorState::kFailed) {
      VIGIL_LOG_INFO("collector recovered: collector={}", name);
    }
    entry.health.state = state;
    entry.health.message = s.ok() ? std::string() : s.message();
    entry.health.code = s.code();
    entry.health.last_run_unix_ns = batch->time_ns;
    entry.health.duration_s = static_cast<double>(duration_ns) / 1e9;
    entry.health.samples = samples;
    ++entry.health.runs;
  }
  if (consumer_) {
    consumer_(std::move(batch));
  }
}

int64_t Scheduler::RunDue() {
  int64_t next = 0;
  std::vector<Entry*> due;
  {
    std::lock_guard lock(mu_);
    const int64_t now = clock_->UnixNanos();
    for (auto& e : entries_) {
      if (!e->enabled) {
        e->instance.reset();
        continue;
      }
      // A tick further away than one interval means the wall clock went back: realign.
      if (e->next_due_ns == 0 || e->next_due_ns <= now ||
          e->next_due_ns - now > e->health.interval_ns) {
        if (e->next_due_ns != 0 && e->next_due_ns - now > e->health.interval_ns) {
          e->next_due_ns = NextAlignedTick(now, e->health.interval_ns);
        } else {
          due.push_back(e.get());
        }
      }
    }
  }
  for (Entry* e : due) {
    RunOne(*e);
  }
  std::lock_guard lock(mu_);
  const int64_t now = clock_->UnixNanos();
  for (Entry* e : due) {
    e->next_due_ns = NextAlignedTick(now, e->health.interval_ns);
  }
  for (auto& e : entries_) {
    if (e->enabled && e->next_due_ns != 0 && (next == 0 || e->next_due_ns < next)) {
      next = e->next_due_ns;
    }
  }
  last_pass_unix_ns_ = now;
  return next == 0 ? now + kMaxWaitNs : next;
}

void Scheduler::RunAllOnce() {
  std::vector<Entry*> enabled;
  {
    std::lock_guard lock(mu_);
    for (auto& e : entries_) {
      if (e->enabled) {
        enabled.push_back(e.get());
      }
    }
  }
  for (Entry* e : enabled) {
    RunOne(*e);
  }
  std::lock_guard lock(mu_);
  last_pass_unix_ns_ = clock_->UnixNanos();
}

void Scheduler::Loop(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const int64_t next = RunDue();
    std::unique_lock lock(mu_);
    const int64_t wait = std::clamp<int64_t>(next - clock_->UnixNanos(), 0, kMaxWaitNs);
    if (wait > 0) {
      cv_.wait_for(lock, stop, std::chrono::nanoseconds(wait), [this] { return wake_; });
    }
    wake_ = false;
  }
}

void Scheduler::Start() {
  if (!thread_.joinable()) {
    thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
  }
}

void Scheduler::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    cv_.notify_all();
    thread_.join();
  }
}

std::vector<CollectorHealth> Scheduler::Health() const {
  std::lock_guard lock(mu_);
  std::vector<CollectorHealth> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) {
    out.push_back(e->health);
  }
  return out;
}

int64_t Scheduler::last_pass_unix_ns() const {
  std::lock_guard lock(mu_);
  return last_pass_unix_ns_;
}

int64_t Scheduler::min_interval_ns() const {
  std::lock_guard lock(mu_);
  int64_t out = 0;
  for (const auto& e : entries_) {
    if (e->enabled && (out == 0 || e->health.interval_ns < out)) {
      out = e->health.interval_ns;
    }
  }
  return out;
}

int64_t Scheduler::max_interval_ns() const {
  std::lock_guard lock(mu_);
  int64_t out = 0;
  for (const auto& e : entries_) {
    if (e->enabled) {
      out = std::max(out, e->health.interval_ns);
    }
  }
  return out;
}

}  // namespace vigil::daemon
