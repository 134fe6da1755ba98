// SPDX-License-Identifier: Apache-2.0
#include "collectors/cgroup/cgroup_stats.h"

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr double kMicrosPerSecond = 1e6;
constexpr double kNanosPerSecondD = 1e9;
// v1 reports "no limit" as PAGE_COUNTER_MAX pages (9223372036854771712 with 4 KiB pages).
constexpr uint64_t kV1UnlimitedThreshold = uint64_t{1} << 62;

std::optional<double> Get(const std::map<std::string, uint64_t>& m, const char* key,
                          double divisor = 1) {
  auto it = m.find(key);
  if (it == m.end()) {
    return std::nullopt;
  }
  return static_cast<double>(it->second) / divisor;
}

// Reads files of one cgroup directory, counting read errors other than "no such file".
class CgroupDir {
 public:
  CgroupDir(std::string dir, CgroupStats* stats, KeptFiles* files)
      : dir_(std::move(dir)), stats_(stats), files_(files) {
    exists_ = !dir_.empty() && IsDirectory(dir_);
    stats_->found |= exists_;
  }
  bool exists() const { return exists_; }

  std::optional<std::string> Read(std::string_view file) {
    if (!exists_) {
      return std::nullopt;
    }
    const std::string path = JoinPath(dir_, file);
    std::string text;
    const Status read = files_ != nullptr ? files_->ReadInto(path, &text, kMaxFileBytes)
                                          : ReadFileInto(path, &text, kMaxFileBytes);
    if (!read.ok()) {
      if (read.code() != StatusCode::kNotFound) {
        ++stats_->unreadable_files;
      }
      return std::nullopt;
    }
    return text;
  }
  std::optional<double> ReadNumber(std::string_view file) {
    std::optional<std::string> text = Read(file);
    if (!text) {
      return std::nullopt;
    }
    std::optional<uint64_t> v = ParseUint64(Trim(*text));
    if (!v) {
      ++stats_->unreadable_files;
      return std::nullopt;
    }
    return static_cast<double>(*v);
  }

 private:
  static constexpr size_t kMaxFileBytes = 1 << 20;
  std::string dir_;
  CgroupStats* stats_;
  KeptFiles* files_;
  bool exists_ = false;
};

void ReadV2Cpu(CgroupDir& dir, CgroupStats* s) {
  if (std::optional<std::string> text = dir.Read("cpu.stat")) {
    auto m = ParseFlatKeyed(*text);
    s->cpu_usage_seconds = Get(m, "usage_usec", kMicrosPerSecond);
    s->cpu_user_seconds = Get(m, "user_usec", kMicrosPerSecond);
    s->cpu_system_seconds = Get(m, "system_usec", kMicrosPerSecond);
    s->cpu_periods = Get(m, "nr_periods");
    s->cpu_throttled_periods = Get(m, "nr_throttled");
    s->cpu_throttled_seconds = Get(m, "throttled_usec", kMicrosPerSecond);
  }
}

void ReadV2Memory(CgroupDir& dir, CgroupStats* s) {
  s->memory_usage_bytes = dir.ReadNumber("memory.current");
  s->memory_peak_bytes = dir.ReadNumber("memory.peak");
  if (std::optional<std::string> text = dir.Read("memory.max")) {
    if (std::optional<uint64_t> limit = ParseMemoryLimit(*text)) {
      s->memory_limit_bytes = static_cast<double>(*limit);
    }
  }
}

void ReadV2Io(CgroupDir& dir, CgroupStats* s) {
  if (std::optional<std::string> text = dir.Read("io.stat")) {
    IoBytes io = ParseIoStat(*text);
    s->io_read_bytes = static_cast<double>(io.read);
    s->io_written_bytes = static_cast<double>(io.written);
  }
}

}  // namespace

std::map<std::string, uint64_t> ParseFlatKeyed(std::string_view text) {
  std::map<std::string, uint64_t> out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view key;
    std::string_view value;
    if (!NextField(&line, &key) || !NextField(&line, &value)) {
      continue;
    }
    if (std::optional<uint64_t> v = ParseUint64(value)) {
      out[std::string(key)] = *v;
    }
  }
  return out;
}

IoBytes ParseIoStat(std::string_view text) {
  IoBytes out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view field;
    NextField(&line, &field);  // The device "maj:min".
    while (NextField(&line, &field)) {
      size_t eq = field.find('=');
      if (eq == std::string_view::npos) {
        continue;
      }
      std::optional<uint64_t> v = ParseUint64(field.substr(eq + 1));
      if (!v) {
        continue;
      }
      if (field.substr(0, eq) == "rbytes") {
        out.read += *v;
      } else if (field.substr(0, eq) == "wbytes") {
        out.written += *v;
      }
    }
  }
  return out;
}

IoBytes ParseBlkioServiceBytes(std::string_view text) {
  IoBytes out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() != 3) {
      continue;  // "Total N" and blank lines.
    }
    std::optional<uint64_t> v = ParseUint64(f[2]);
    if (!v) {
      continue;
    }
    if (f[1] == "Read") {
      out.read += *v;
    } else if (f[1] == "Write") {
      out.written += *v;
    }
  }
  return out;
}

std::optional<uint64_t> ParseMemoryLimit(std::string_view text) {
  text = Trim(text);
  if (text == "max") {
    return std::nullopt;
  }
  std::optional<uint64_t> v = ParseUint64(text);
  if (!v || *v >= kV1UnlimitedThreshold) {
    return std::nullopt;
  }
  return v;
}

CgroupStats ReadCgroupStats(const CgroupLayout& layout, std::string_view path,
                            int64_t clock_ticks_per_second, KeptFiles* files) {
  CgroupStats s;
  const double ticks =
      clock_ticks_per_second > 0 ? static_cast<double>(clock_ticks_per_second) : 100.0;
  CgroupDir unified(layout.Dir(layout.unified, path), &s, files);
  if (layout.kind == CgroupLayout::Kind::kV2) {
    ReadV2Cpu(unified, &s);
    ReadV2Memory(unified, &s);
    ReadV2Io(unified, &s);
    return s;
  }

  // v1 and hybrid: the v1 controllers, the unified tree only for what v1 does not mount.
  // A cgroup the v1 controller does not have (hybrid hosts: units without accounting) is read
  // from the unified tree, where cpu.stat always exists; missing files there are silent.
  CgroupDir cpuacct(layout.Dir(layout.V1Root("cpuacct"), path), &s, files);
  CgroupDir cpu(layout.Dir(layout.V1Root("cpu"), path), &s, files);
  if (!cpuacct.exists() && !cpu.exists()) {
    ReadV2Cpu(unified, &s);
  } else {
    s.cpu_usage_seconds = cpuacct.ReadNumber("cpuacct.usage");
    if (s.cpu_usage_seconds) {
      *s.cpu_usage_seconds /= kNanosPerSecondD;
    }
    if (std::optional<std::string> text = cpuacct.Read("cpuacct.stat")) {
      auto m = ParseFlatKeyed(*text);
      s.cpu_user_seconds = Get(m, "user", ticks);
      s.cpu_system_seconds = Get(m, "system", ticks);
    }
    if (std::optional<std::string> text = cpu.Read("cpu.stat")) {
      auto m = ParseFlatKeyed(*text);
      s.cpu_periods = Get(m, "nr_periods");
      s.cpu_throttled_periods = Get(m, "nr_throttled");
      s.cpu_throttled_seconds = Get(m, "throttled_time", kNanosPerSecondD);
    }
  }

  CgroupDir memory(layout.Dir(layout.V1Root("memory"), path), &s, files);
  if (!memory.exists()) {
    ReadV2Memory(unified, &s);
  } else {
    s.memory_usage_bytes = memory.ReadNumber("memory.usage_in_bytes");
    s.memory_peak_bytes = memory.ReadNumber("memory.max_usage_in_bytes");
    if (std::optional<std::string> text = memory.Read("memory.limit_in_bytes")) {
      if (std::optional<uint64_t> limit = ParseMemoryLimit(*text)) {
        s.memory_limit_bytes = static_cast<double>(*limit);
      }
    }
  }

  CgroupDir blkio(layout.Dir(layout.V1Root("blkio"), path), &s, files);
  if (!blkio.exists()) {
    ReadV2Io(unified, &s);
  } else {
    if (std::optional<std::string> text = blkio.Read("blkio.throttle.io_service_bytes")) {
      IoBytes io = ParseBlkioServiceBytes(*text);
      s.io_read_bytes = static_cast<double>(io.read);
      s.io_written_bytes = static_cast<double>(io.written);
    }
  }
  return s;
}

}  // namespace vigil
