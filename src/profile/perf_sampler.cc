// SPDX-License-Identifier: Apache-2.0
#include "profile/perf_sampler.h"

#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"
#include "profile/perf_ring.h"

namespace vigil {
namespace {

constexpr uint64_t kUserRegsMask =
    (1ULL << PERF_REG_X86_AX) | (1ULL << PERF_REG_X86_BX) | (1ULL << PERF_REG_X86_CX) |
    (1ULL << PERF_REG_X86_DX) | (1ULL << PERF_REG_X86_SI) | (1ULL << PERF_REG_X86_DI) |
    (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_IP) |
    (1ULL << PERF_REG_X86_R8) | (1ULL << PERF_REG_X86_R9) | (1ULL << PERF_REG_X86_R10) |
    (1ULL << PERF_REG_X86_R11) | (1ULL << PERF_REG_X86_R12) | (1ULL << PERF_REG_X86_R13) |
    (1ULL << PERF_REG_X86_R14) | (1ULL << PERF_REG_X86_R15);
constexpr uint32_t kMaxUserStackBytes = 65528;  // The kernel's cap (u16 size, 8-aligned).

int PerfEventOpen(perf_event_attr* attr, int pid, int cpu) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

std::vector<int> ListNumbers(const std::string& dir) {
  std::vector<int> out;
  StatusOr<std::vector<std::string>> names = ListDir(dir);
  if (!names.ok()) {
    return out;
  }
  for (const std::string& name : *names) {
    if (std::optional<int64_t> value = ParseInt64(name)) {
      out.push_back(static_cast<int>(*value));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads `n` bytes at `*pos` of `record`; false when the record is shorter.
template <typename T>
bool Take(std::span<const uint8_t> record, size_t* pos, T* out) {
  if (*pos + sizeof(T) > record.size()) {
    return false;
  }
  std::memcpy(out, record.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return true;
}

}  // namespace

bool ParsePerfSample(std::span<const uint8_t> record, bool with_stack, RawSample* out) {
  size_t pos = sizeof(perf_event_header);
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0, nr = 0;
  if (!Take(record, &pos, &pid) || !Take(record, &pos, &tid) || !Take(record, &pos, &time) ||
      !Take(record, &pos, &nr) || nr > (record.size() - pos) / 8) {
    return false;
  }
  out->pid = static_cast<int>(pid);
  out->tid = static_cast<int>(tid);
  out->time_ns = time;
  out->kernel_ips.clear();
  out->user_ips.clear();
  out->user_regs.clear();
  out->user_stack.clear();
  std::vector<uint64_t>* into = &out->user_ips;
  for (uint64_t i = 0; i < nr; ++i) {
    uint64_t ip = 0;
    Take(record, &pos, &ip);
    if (ip >= PERF_CONTEXT_MAX) {  // A context marker, not an address.
      into = ip == PERF_CONTEXT_KERNEL ? &out->kernel_ips
             : ip == PERF_CONTEXT_USER ? &out->user_ips
                                       : nullptr;
      continue;
    }
    if (into != nullptr) {
      into->push_back(ip);
    }
  }
  if (!with_stack) {
    return true;
  }
  uint64_t abi = 0;
  if (!Take(record, &pos, &abi)) {
    return false;
  }
  if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
    out->user_regs.resize(kUserRegCount);
    for (int i = 0; i < kUserRegCount; ++i) {
      if (!Take(record, &pos, &out->user_regs[static_cast<size_t>(i)])) {
        return false;
      }
    }
  }
  uint64_t size = 0;
  if (!Take(record, &pos, &size) || size > record.size() - pos) {
    return false;
  }
  const uint8_t* stack = record.data() + pos;
  pos += size;
  uint64_t dyn_size = 0;
  if (size != 0 && Take(record, &pos, &dyn_size)) {
    out->user_stack.assign(stack, stack + std::min(size, dyn_size));
  }
  return true;
}

int PerfEventParanoid(const std::string& proc_root) {
  StatusOr<std::string> text = ReadSmallFile(proc_root + "/sys/kernel/perf_event_paranoid", 64);
  std::optional<int64_t> value = text.ok() ? ParseInt64(Trim(*text)) : std::nullopt;
  return value ? static_cast<int>(*value) : 2;
}

StatusOr<std::unique_ptr<PerfSampler>> PerfSampler::Start(const SamplerOptions& options) {
  if (options.frequency_hz <= 0 || options.frequency_hz > 10000) {
    return InvalidArgumentError("sampling frequency must be 1..10000 Hz");
  }
  if (!options.all && options.pids.empty()) {
    return InvalidArgumentError("no process to sample (give a pid, or all)");
  }
  if (options.copy_user_stack &&
      (options.user_stack_bytes == 0 || options.user_stack_bytes > kMaxUserStackBytes)) {
    return InvalidArgumentError("user stack copy must be 8..65528 bytes");
  }
  std::unique_ptr<PerfSampler> sampler(new PerfSampler(options));
  sampler->options_.user_stack_bytes &= ~7U;
  if (sampler->options_.ring_pages == 0) {
    // Stack copies are 8 KiB a sample: 1024 pages hold ~2.5 s at 199 Hz, enough to ride out the
    // first unwind of a process (libdw loads its CFI then), which took over 0.6 s on a loaded
    // machine and overflowed 256 pages. The rings of all threads together stay near 64 MiB:
    // processes with many threads (data loaders) get smaller rings, down to 16 pages, since
    // their threads are rarely all busy at once.
    size_t threads = 0;
    for (int pid : options.pids) {
      threads += ListNumbers(options.proc_root + "/" + std::to_string(pid) + "/task").size();
    }
    int pages = 1024;
    while (options.copy_user_stack && pages > 16 && threads * static_cast<size_t>(pages) > 16384) {
      pages /= 2;
    }
    sampler->options_.ring_pages = options.copy_user_stack && !options.all ? pages : 8;
    if (options.copy_user_stack && options.all) {
      sampler->options_.ring_pages = 256;  // One ring per CPU.
    }
  }
  sampler->kernel_stacks_ = options.kernel_stacks;
  VIGIL_RETURN_IF_ERROR(sampler->OpenFirst());
  sampler->Rescan();
  return sampler;
}

PerfSampler::PerfSampler(SamplerOptions options) : options_(std::move(options)) {}

PerfSampler::~PerfSampler() = default;

// Finds the event (cycles or cpu-clock) and whether kernel frames are allowed, by opening the
// first target's event with each choice in turn.
Status PerfSampler::OpenFirst() {
  struct Choice {
    uint32_t type;
    uint64_t config;
    const char* name;
  };
  std::vector<Choice> events;
  if (options_.try_hardware) {
    events.push_back({PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"});
  }
  events.push_back({PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock"});
  int pid = -1, tid = -1, cpu = -1;
  if (options_.all) {
    cpu = 0;
  } else {
    for (int candidate : options_.pids) {
      std::vector<int> tids =
          ListNumbers(options_.proc_root + "/" + std::to_string(candidate) + "/task");
      if (!tids.empty()) {
        pid = candidate;
        tid = tids.front();
        break;
      }
    }
    if (pid < 0) {
      return NotFoundError("no such process: " + std::to_string(options_.pids.front()));
    }
  }
  Status last = OkStatus();
  for (const Choice& event : events) {
    for (bool kernel : {options_.kernel_stacks, false}) {
      event_type_ = event.type;
      event_config_ = event.config;
      event_name_ = event.name;
      kernel_stacks_ = kernel;
      last = OpenOn(pid, options_.all ? -1 : tid, cpu);
      if (last.ok()) {
        return OkStatus();
      }
      if (!kernel) {
        break;
      }
    }
  }
  if (last.code() == StatusCode::kPermissionDenied) {
    return PermissionDeniedError(
        fmt::format("perf_event_open refused (perf_event_paranoid={}): run as root, or lower "
                    "/proc/sys/kernel/perf_event_paranoid",
                    PerfEventParanoid(options_.proc_root)));
  }
  return last;
}

Status PerfSampler::OpenOn(int pid, int tid, int cpu) {
  const int key = options_.all ? cpu : tid;
  if (rings_.count(key) != 0) {
    return OkStatus();
  }
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = event_type_;
  attr.config = event_config_;
  attr.freq = 1;
  attr.sample_freq = static_cast<uint64_t>(options_.frequency_hz);
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
  if (options_.copy_user_stack) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = kUserRegsMask;
    attr.sample_stack_user = options_.user_stack_bytes;
  }
  attr.disabled = 1;
  attr.exclude_kernel = kernel_stacks_ ? 0 : 1;
  attr.exclude_callchain_kernel = kernel_stacks_ ? 0 : 1;
  attr.exclude_hv = 1;
  attr.exclude_idle = 1;
  attr.watermark = 1;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  attr.wakeup_watermark =
      static_cast<uint32_t>(page * static_cast<size_t>(options_.ring_pages) / 2);
  ScopedFd fd(PerfEventOpen(&attr, options_.all ? -1 : tid, cpu));
  if (!fd.valid()) {
    const int err = errno;
    if (err == EACCES || err == EPERM) {
      return PermissionDeniedError(ErrnoStatus(err, "perf_event_open").message());
    }
    if (err == ESRCH) {
      return NotFoundError("thread " + std::to_string(tid) + " exited");
    }
    return ErrnoStatus(err,
                       fmt::format("perf_event_open {} on tid {} cpu {}", event_name_, tid, cpu));
  }
  VIGIL_ASSIGN_OR_RETURN(PerfRing ring, PerfRing::Map(std::move(fd), options_.ring_pages));
  if (running_) {
    VIGIL_RETURN_IF_ERROR(ring.Enable());
  }
  rings_.emplace(key, std::make_unique<PerfRing>(std::move(ring)));
  tid_pid_[key] = pid;
  ++stats_.threads_seen;
  return OkStatus();
}

void PerfSampler::Rescan() {
  if (options_.all) {
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (int cpu = 0; cpu < cpus; ++cpu) {
      if (!OpenOn(-1, -1, cpu).ok()) {
        ++stats_.open_failures;  // An offline CPU.
      }
    }
    return;
  }
  for (int pid : options_.pids) {
    for (int tid : ListNumbers(options_.proc_root + "/" + std::to_string(pid) + "/task")) {
      if (rings_.count(tid) == 0 && !OpenOn(pid, tid, -1).ok()) {
        ++stats_.open_failures;
      }
    }
  }
}

void PerfSampler::Drain(PerfRing& ring, const std::function<void(const RawSample&)>& on_sample) {
  Status status = ring.ForEachRecord([&](uint32_t type, std::span<const uint8_t> record) {
    if (type == PERF_RECORD_SAMPLE) {
      if (ParsePerfSample(record, options_.copy_user_stack, &scratch_)) {
        ++stats_.samples;
        on_sample(scratch_);
      } else {
        ++stats_.malformed;
      }
    } else if (type == PERF_RECORD_LOST && record.size() >= 24) {
      uint64_t lost = 0;
      std::memcpy(&lost, record.data() + 16, sizeof(lost));
      stats_.lost += lost;
    }
  });
  (void)status;  // A corrupt ring was reset to its head; the next records are still usable.
}

Status PerfSampler::Run(std::chrono::steady_clock::time_point deadline,
                        const std::function<void(const RawSample&)>& on_sample) {
  running_ = true;
  for (auto& [key, ring] : rings_) {
    (void)ring->Enable();
  }
  auto next_rescan = std::chrono::steady_clock::now() + options_.rescan_interval;
  std::vector<pollfd> fds;
  std::vector<int> keys;
  while (!rings_.empty()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      break;
    }
    if (now >= next_rescan) {
      Rescan();  // New events are enabled as they open (running_).
      next_rescan = now + options_.rescan_interval;
    }
    fds.clear();
    keys.clear();
    for (auto& [key, ring] : rings_) {
      fds.push_back({ring->fd(), POLLIN, 0});
      keys.push_back(key);
    }
    const auto wait = std::min(deadline, next_rescan) - now;
    const int wait_ms = static_cast<int>(std::clamp<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(wait).count() + 1, 1, 100));
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) {
      return ErrnoStatus(errno, "poll perf events");
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      auto it = rings_.find(keys[i]);
      Drain(*it->second, on_sample);
      if ((fds[i].revents & (POLLHUP | POLLERR)) != 0) {  // The thread exited.
        rings_.erase(it);
      }
    }
  }
  running_ = false;
  for (auto& [key, ring] : rings_) {
    (void)ring->Disable();
    Drain(*ring, on_sample);
  }
  return OkStatus();
}

}  // namespace vigil
