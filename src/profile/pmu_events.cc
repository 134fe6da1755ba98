// SPDX-License-Identifier: Apache-2.0
#include "profile/pmu_events.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr int kMaxCpus = 4096;
constexpr size_t kMaxSysfsFileBytes = 4096;
constexpr size_t kMaxCpuinfoBytes = 4 << 20;  // 4096 CPUs x about 1 KiB each.
constexpr size_t kMaxDevices = 512;
constexpr size_t kMaxEventsInList = 64;

struct NamedConfig {
  std::string_view name;
  uint64_t config;
};

constexpr NamedConfig kHardware[] = {
    {"cycles", PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES},
};

constexpr NamedConfig kSoftware[] = {
    {"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
};

// perf's hardware-cache names: <cache>-<op>s for accesses, <cache>-<op>-misses for misses.
constexpr NamedConfig kCaches[] = {
    {"L1-dcache", PERF_COUNT_HW_CACHE_L1D}, {"L1-icache", PERF_COUNT_HW_CACHE_L1I},
    {"LLC", PERF_COUNT_HW_CACHE_LL},        {"dTLB", PERF_COUNT_HW_CACHE_DTLB},
    {"iTLB", PERF_COUNT_HW_CACHE_ITLB},     {"branch", PERF_COUNT_HW_CACHE_BPU},
    {"node", PERF_COUNT_HW_CACHE_NODE},
};
constexpr NamedConfig kCacheOps[] = {
    {"load", PERF_COUNT_HW_CACHE_OP_READ},
    {"store", PERF_COUNT_HW_CACHE_OP_WRITE},
    {"prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH},
};

constexpr std::string_view kDefaultPreset[] = {
    "instructions",          "cycles",           "cache-references", "cache-misses",
    "L1-dcache-load-misses", "dTLB-load-misses", "branch-misses",
};
constexpr std::string_view kSoftwarePreset[] = {
    "task-clock", "context-switches", "cpu-migrations", "minor-faults", "major-faults",
};
// AMD Zen 1-3 data fabric: DRAM channel data beats (64 bytes each, reads and writes together) of
// channels 0-7, as perf's amdzen2/amdzen3 data-fabric tables encode them.
constexpr std::string_view kAmdDfDramEvents[] = {
    "amd_df/event=0x07,umask=0x38/",  "amd_df/event=0x47,umask=0x38/",
    "amd_df/event=0x87,umask=0x38/",  "amd_df/event=0xc7,umask=0x38/",
    "amd_df/event=0x107,umask=0x38/", "amd_df/event=0x147,umask=0x38/",
    "amd_df/event=0x187,umask=0x38/", "amd_df/event=0x1c7,umask=0x38/",
};
constexpr double kDramBytesPerBeat = 64;

std::optional<uint64_t> ParseNumber(std::string_view text) {
  text = Trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    uint64_t value = 0;
    text.remove_prefix(2);
    if (text.empty() || text.size() > 16) {
      return std::nullopt;
    }
    for (char c : text) {
      int digit = 0;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return std::nullopt;
      }
      value = value << 4 | static_cast<uint64_t>(digit);
    }
    return value;
  }
  return ParseUint64(text);
}

bool IsCorePmuName(std::string_view name) {
  return name == "cpu" || name == "cpu_core" || name.starts_with("armv8_") ||
         name.starts_with("armv7_");
}

std::string ReadTrimmed(const std::string& path, Status* status) {
  StatusOr<std::string> text = ReadSmallFile(path, kMaxSysfsFileBytes);
  if (!text.ok()) {
    *status = text.status();
    return {};
  }
  *status = OkStatus();
  return std::string(Trim(*text));
}

StatusOr<PmuDevice> ReadDevice(const std::string& dir, std::string name) {
  PmuDevice dev;
  dev.name = std::move(name);
  dev.dir = dir;
  Status s;
  const std::string type = ReadTrimmed(JoinPath(dir, "type"), &s);
  VIGIL_RETURN_IF_ERROR(s);
  std::optional<uint64_t> t = ParseUint64(type);
  if (!t || *t > UINT32_MAX) {
    return DataLossError(JoinPath(dir, "type") + ": not a number");
  }
  dev.type = static_cast<uint32_t>(*t);
  const std::string mask = ReadTrimmed(JoinPath(dir, "cpumask"), &s);
  if (s.ok()) {
    VIGIL_ASSIGN_OR_RETURN(dev.cpus, ParseCpuList(mask));
  }
  StatusOr<std::vector<std::string>> fields = ListDir(JoinPath(dir, "format"));
  if (fields.ok()) {
    std::sort(fields->begin(), fields->end());
    for (const std::string& field : *fields) {
      const std::string text = ReadTrimmed(JoinPath(JoinPath(dir, "format"), field), &s);
      if (!s.ok()) {
        continue;
      }
      StatusOr<PmuFormatField> f = ParsePmuFormat(field, text);
      if (f.ok()) {
        dev.format.push_back(std::move(*f));
      }
    }
  }
  return dev;
}

// Places `value` into the bits of `field` (low bits into the first range).
Status PlaceField(const PmuFormatField& field, uint64_t value, PmuEvent* event) {
  uint64_t* word = field.word == 0   ? &event->config
                   : field.word == 1 ? &event->config1
                                     : &event->config2;
  uint64_t rest = value;
  int width_total = 0;
  for (const auto& [lo, hi] : field.bit_ranges) {
    const int width = hi - lo + 1;
    width_total += width;
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    *word |= (rest & mask) << lo;
    rest = width >= 64 ? 0 : rest >> width;
  }
  if (rest != 0) {
    return InvalidArgumentError(fmt::format("value {:#x} does not fit the {} bits of '{}'", value,
                                            width_total, field.name));
  }
  return OkStatus();
}

const PmuFormatField* FindField(const PmuDevice& dev, std::string_view name) {
  for (const PmuFormatField& f : dev.format) {
    if (f.name == name) {
      return &f;
    }
  }
  return nullptr;
}

// A sysfs event's .scale and .unit as bytes per count where the unit is bytes.
double SysfsScale(const std::string& events_dir, std::string_view name) {
  Status s;
  const std::string scale_text =
      ReadTrimmed(JoinPath(events_dir, std::string(name) + ".scale"), &s);
  if (!s.ok()) {
    return 1;
  }
  std::optional<double> scale = ParseDouble(scale_text);
  if (!scale || !(*scale > 0)) {
    return 1;
  }
  const std::string unit = ReadTrimmed(JoinPath(events_dir, std::string(name) + ".unit"), &s);
  if (unit == "MiB") {
    return *scale * 1024 * 1024;
  }
  if (unit == "KiB") {
    return *scale * 1024;
  }
  return *scale;
}

Status ApplyTerms(const PmuDevice& dev, std::string_view terms, PmuEvent* event) {
  for (std::string_view term : Split(terms, ',')) {
    term = Trim(term);
    if (term.empty()) {
      continue;
    }
    const size_t eq = term.find('=');
    const std::string_view key = Trim(term.substr(0, eq));
    uint64_t value = 1;  // A bare flag term ("edge") sets the field to 1.
    if (eq != std::string_view::npos) {
      std::optional<uint64_t> v = ParseNumber(term.substr(eq + 1));
      if (!v) {
        return InvalidArgumentError("'" + SanitizeForLog(term, 60) + "': not a number");
      }
      value = *v;
    }
    if (key == "config" || key == "config1" || key == "config2") {
      (key == "config"    ? event->config
       : key == "config1" ? event->config1
                          : event->config2) |= value;
      continue;
    }
    const PmuFormatField* field = FindField(dev, key);
    if (field == nullptr) {
      return InvalidArgumentError("PMU " + dev.name + " has no format field '" +
                                  SanitizeForLog(key, 40) + "'");
    }
    VIGIL_RETURN_IF_ERROR(PlaceField(*field, value, event));
  }
  return OkStatus();
}

std::optional<PmuEvent> CacheEvent(std::string_view name) {
  for (const NamedConfig& cache : kCaches) {
    if (!name.starts_with(cache.name) || name.size() <= cache.name.size() ||
        name[cache.name.size()] != '-') {
      continue;
    }
    std::string_view rest = name.substr(cache.name.size() + 1);
    for (const NamedConfig& op : kCacheOps) {
      const std::string plural =
          std::string(op.name) + (op.name == "prefetch" ? "es" : "s");  // loads, prefetches
      uint64_t result = 0;
      if (rest == plural) {
        result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
      } else if (rest == std::string(op.name) + "-misses") {
        result = PERF_COUNT_HW_CACHE_RESULT_MISS;
      } else {
        continue;
      }
      PmuEvent e;
      e.name = std::string(name);
      e.kind = e.name;
      e.type = PERF_TYPE_HW_CACHE;
      e.config = cache.config | op.config << 8 | result << 16;
      e.hardware = true;
      return e;
    }
  }
  return std::nullopt;
}

// Which AMD families' data fabric counts DRAM channel data with the Zen 1-3 encoding.
bool AmdDfHasZen3DramEvents(const PmuHost& host) {
  if (host.cpu_family == 0x17) {
    return true;  // Zen, Zen+, Zen 2.
  }
  if (host.cpu_family == 0x19) {  // Zen 3; Zen 4 (models 0x10-0x1f, 0x60-0xaf) differs.
    return (host.cpu_model >= 0x00 && host.cpu_model <= 0x0f) ||
           (host.cpu_model >= 0x20 && host.cpu_model <= 0x5f);
  }
  return false;
}

// The memory preset's event specs with the kind each counts.
std::vector<std::pair<std::string, std::string>> MemoryPreset(const PmuHost& host) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const PmuDevice& dev : host.devices) {
    if (!dev.name.starts_with("uncore_imc_")) {
      continue;
    }
    const std::string events = JoinPath(dev.dir, "events");
    if (PathExists(JoinPath(events, "cas_count_read"))) {
      out.emplace_back(dev.name + "/cas_count_read/", "memory-read");
    }
    if (PathExists(JoinPath(events, "cas_count_write"))) {
      out.emplace_back(dev.name + "/cas_count_write/", "memory-write");
    }
  }
  if (host.vendor == CpuVendor::kAmd && host.Find("amd_df") != nullptr &&
      AmdDfHasZen3DramEvents(host)) {
    for (std::string_view spec : kAmdDfDramEvents) {
      out.emplace_back(std::string(spec), "memory-data");
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> PresetSpecs(const PmuHost& host,
                                                             std::string_view preset) {
  std::vector<std::pair<std::string, std::string>> out;
  if (preset == "default") {
    for (std::string_view name : kDefaultPreset) {
      out.emplace_back(std::string(name), "");
    }
    for (auto& m : MemoryPreset(host)) {
      out.push_back(std::move(m));
    }
  } else if (preset == "software") {
    for (std::string_view name : kSoftwarePreset) {
      out.emplace_back(std::string(name), "");
    }
  } else if (preset == "memory") {
    out = MemoryPreset(host);
  }
  return out;
}

}  // namespace

std::string_view CpuVendorName(CpuVendor vendor) {
  switch (vendor) {
    case CpuVendor::kIntel:
      return "intel";
    case CpuVendor::kAmd:
      return "amd";
    case CpuVendor::kArm:
      return "arm";
    case CpuVendor::kUnknown:
      break;
  }
  return "unknown";
}

StatusOr<PmuFormatField> ParsePmuFormat(std::string_view name, std::string_view text) {
  text = Trim(text);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return InvalidArgumentError("format '" + SanitizeForLog(text, 60) + "': expected config:BITS");
  }
  PmuFormatField field;
  field.name = std::string(name);
  const std::string_view word = text.substr(0, colon);
  if (word == "config") {
    field.word = 0;
  } else if (word == "config1") {
    field.word = 1;
  } else if (word == "config2") {
    field.word = 2;
  } else {
    return InvalidArgumentError("format '" + SanitizeForLog(text, 60) + "': unknown word");
  }
  for (std::string_view range : Split(text.substr(colon + 1), ',')) {
    const size_t dash = range.find('-');
    std::optional<uint64_t> lo = ParseUint64(Trim(range.substr(0, dash)));
    std::optional<uint64_t> hi =
        dash == std::string_view::npos ? lo : ParseUint64(Trim(range.substr(dash + 1)));
    if (!lo || !hi || *lo > *hi || *hi > 63) {
      return InvalidArgumentError("format '" + SanitizeForLog(text, 60) + "': bad bit range");
    }
    field.bit_ranges.emplace_back(static_cast<int>(*lo), static_cast<int>(*hi));
  }
  if (field.bit_ranges.empty()) {
    return InvalidArgumentError("format '" + SanitizeForLog(text, 60) + "': no bits");
  }
  return field;
}

StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  text = Trim(text);
  if (text.empty()) {
    return cpus;
  }
  for (std::string_view part : Split(text, ',')) {
    part = Trim(part);
    const size_t dash = part.find('-');
    std::optional<uint64_t> lo = ParseUint64(part.substr(0, dash));
    std::optional<uint64_t> hi =
        dash == std::string_view::npos ? lo : ParseUint64(part.substr(dash + 1));
    if (!lo || !hi || *lo > *hi || *hi >= kMaxCpus) {
      return InvalidArgumentError("cpu list '" + SanitizeForLog(text, 60) + "' is malformed");
    }
    for (uint64_t c = *lo; c <= *hi; ++c) {
      cpus.push_back(static_cast<int>(c));
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

void ParseCpuInfo(std::string_view text, PmuHost* host) {
  std::string_view line;
  int processors = 0;
  bool first_block = true;
  while (NextLine(&text, &line)) {
    const size_t colon = line.find(':');
    if (Trim(line).empty()) {
      first_block = processors == 0;
      continue;
    }
    if (colon == std::string_view::npos) {
      continue;
    }
    const std::string_view key = Trim(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (key == "processor") {
      ++processors;
    }
    if (!first_block) {
      continue;  // Vendor, family and model from the first CPU.
    }
    if (key == "vendor_id") {
      host->vendor = value == "GenuineIntel"   ? CpuVendor::kIntel
                     : value == "AuthenticAMD" ? CpuVendor::kAmd
                                               : host->vendor;
    } else if (key == "CPU implementer") {
      host->vendor = CpuVendor::kArm;
    } else if (key == "cpu family") {
      if (std::optional<uint64_t> v = ParseUint64(value); v && *v < 4096) {
        host->cpu_family = static_cast<int>(*v);
      }
    } else if (key == "model") {
      if (std::optional<uint64_t> v = ParseUint64(value); v && *v < 4096) {
        host->cpu_model = static_cast<int>(*v);
      }
    }
  }
  if (host->online_cpus.empty()) {
    for (int i = 0; i < processors && i < kMaxCpus; ++i) {
      host->online_cpus.push_back(i);
    }
  }
}

const PmuDevice* PmuHost::Find(std::string_view name) const {
  for (const PmuDevice& dev : devices) {
    if (dev.name == name) {
      return &dev;
    }
  }
  return nullptr;
}

const PmuDevice* PmuHost::CorePmu() const {
  for (const PmuDevice& dev : devices) {
    if (IsCorePmuName(dev.name)) {
      return &dev;
    }
  }
  return nullptr;
}

std::string PmuHost::DeviceNames() const {
  std::vector<std::string> names;
  names.reserve(devices.size());
  for (const PmuDevice& dev : devices) {
    names.push_back(dev.name);
  }
  return Join(names, ", ");
}

StatusOr<PmuHost> DetectPmuHost(std::string_view proc_root, std::string_view sys_root) {
  PmuHost host;
  const std::string sys(sys_root);
  Status s;
  const std::string online = ReadTrimmed(JoinPath(sys, "devices/system/cpu/online"), &s);
  if (s.ok()) {
    VIGIL_ASSIGN_OR_RETURN(host.online_cpus, ParseCpuList(online));
  }
  StatusOr<std::string> cpuinfo =
      ReadSmallFile(JoinPath(std::string(proc_root), "cpuinfo"), kMaxCpuinfoBytes);
  if (cpuinfo.ok()) {
    ParseCpuInfo(*cpuinfo, &host);
  }
  const std::string devices_dir = JoinPath(sys, "bus/event_source/devices");
  StatusOr<std::vector<std::string>> names = ListDir(devices_dir);
  if (!names.ok()) {
    return names.status().WithContext("perf event sources");
  }
  std::sort(names->begin(), names->end());
  for (const std::string& name : *names) {
    if (host.devices.size() >= kMaxDevices) {
      break;
    }
    StatusOr<PmuDevice> dev = ReadDevice(JoinPath(devices_dir, name), name);
    if (dev.ok()) {
      host.devices.push_back(std::move(*dev));
    }
  }
  return host;
}

std::optional<PmuEvent> GenericPmuEvent(std::string_view name) {
  for (const NamedConfig& hw : kHardware) {
    if (hw.name == name) {
      PmuEvent e;
      e.name = std::string(name);
      e.kind = hw.name == "cpu-cycles" ? "cycles" : std::string(hw.name);
      e.type = PERF_TYPE_HARDWARE;
      e.config = hw.config;
      e.hardware = true;
      return e;
    }
  }
  for (const NamedConfig& sw : kSoftware) {
    if (sw.name == name) {
      PmuEvent e;
      e.name = std::string(name);
      e.kind = sw.name == "faults"       ? "page-faults"
               : sw.name == "cs"         ? "context-switches"
               : sw.name == "migrations" ? "cpu-migrations"
                                         : std::string(sw.name);
      e.pmu = "software";
      e.type = PERF_TYPE_SOFTWARE;
      e.config = sw.config;
      return e;
    }
  }
  return CacheEvent(name);
}

StatusOr<PmuEvent> ResolvePmuEvent(const PmuHost& host, std::string_view spec) {
  spec = Trim(spec);
  if (spec.empty() || spec.size() > 256) {
    return InvalidArgumentError("event names are 1 to 256 characters");
  }
  if (std::optional<PmuEvent> generic = GenericPmuEvent(spec)) {
    const PmuDevice* core = host.CorePmu();
    generic->pmu = generic->hardware ? (core ? core->name : "cpu") : generic->pmu;
    return *generic;
  }
  const size_t slash = spec.find('/');
  if (slash == std::string_view::npos) {
    if (spec.size() > 1 && spec[0] == 'r') {
      std::optional<uint64_t> raw = ParseNumber("0x" + std::string(spec.substr(1)));
      if (raw) {
        PmuEvent e;
        e.name = std::string(spec);
        e.pmu = "cpu";
        e.type = PERF_TYPE_RAW;
        e.config = *raw;
        e.hardware = true;
        if (const PmuDevice* core = host.CorePmu()) {
          e.pmu = core->name;
        }
        return e;
      }
    }
    return InvalidArgumentError("unknown event '" + SanitizeForLog(spec, 60) +
                                "' (perf's generic names, a preset, pmu/terms/ or rNNNN)");
  }
  if (spec.back() != '/' || spec.find('/', slash + 1) != spec.size() - 1) {
    return InvalidArgumentError("event '" + SanitizeForLog(spec, 60) + "': expected pmu/terms/");
  }
  const std::string_view pmu_name = spec.substr(0, slash);
  const std::string_view terms = spec.substr(slash + 1, spec.size() - slash - 2);
  const PmuDevice* dev = host.Find(pmu_name);
  if (dev == nullptr) {
    return NotFoundError("no PMU '" + SanitizeForLog(pmu_name, 60) + "' on this host");
  }
  PmuEvent e;
  e.name = std::string(spec);
  e.pmu = dev->name;
  e.type = dev->type;
  e.hardware = dev->name != "software" && dev->name != "tracepoint";
  if (!dev->cpus.empty()) {
    e.scope = PmuEventScope::kUncore;
    e.cpus = dev->cpus;
  }
  // A single term without '=' that names a file in events/ is a named event.
  const std::string events_dir = JoinPath(dev->dir, "events");
  const std::string_view only = Trim(terms);
  if (!only.empty() && only.find('=') == std::string_view::npos &&
      only.find(',') == std::string_view::npos && FindField(*dev, only) == nullptr) {
    const std::string path = JoinPath(events_dir, std::string(only));
    StatusOr<std::string> body = ReadSmallFile(path, kMaxSysfsFileBytes);
    if (!body.ok()) {
      return NotFoundError("PMU " + dev->name + " has no event '" + SanitizeForLog(only, 60) + "'");
    }
    VIGIL_RETURN_IF_ERROR(ApplyTerms(*dev, Trim(*body), &e).WithContext(path));
    e.scale = SysfsScale(events_dir, only);
    if (only == "cas_count_read") {
      e.kind = "memory-read";
    } else if (only == "cas_count_write") {
      e.kind = "memory-write";
    }
    return e;
  }
  VIGIL_RETURN_IF_ERROR(ApplyTerms(*dev, terms, &e).WithContext(std::string(spec)));
  return e;
}

bool IsPmuPreset(std::string_view name) {
  return name == "default" || name == "software" || name == "memory";
}

std::vector<std::string> PresetEventNames(const PmuHost& host, std::string_view preset) {
  std::vector<std::string> out;
  for (auto& [spec, kind] : PresetSpecs(host, preset)) {
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<std::string> SplitPmuEventList(std::string_view list) {
  std::vector<std::string> out;
  std::string current;
  int slashes = 0;  // Inside "pmu/.../" after an odd number of slashes.
  for (char c : list) {
    if (c == '/') {
      ++slashes;
    }
    if (c == ',' && slashes % 2 == 0) {
      if (!Trim(current).empty()) {
        out.emplace_back(Trim(current));
      }
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  if (!Trim(current).empty()) {
    out.emplace_back(Trim(current));
  }
  return out;
}

StatusOr<PmuEventSelection> SelectPmuEvents(const PmuHost& host, std::string_view list) {
  PmuEventSelection out;
  const bool have_core = host.CorePmu() != nullptr;
  const std::vector<std::string> items = SplitPmuEventList(list);
  if (items.empty()) {
    return InvalidArgumentError("the PMU event list is empty");
  }
  auto add = [&](PmuEvent event) {
    for (const PmuEvent& e : out.events) {
      if (e.type == event.type && e.config == event.config && e.config1 == event.config1 &&
          e.config2 == event.config2) {
        return;  // "cs" and "context-switches" count the same thing once.
      }
    }
    out.events.push_back(std::move(event));
  };
  for (const std::string& item : items) {
    if (IsPmuPreset(item)) {
      std::vector<std::string> missing;
      for (auto& [spec, kind] : PresetSpecs(host, item)) {
        StatusOr<PmuEvent> e = ResolvePmuEvent(host, spec);
        if (!e.ok()) {
          out.unavailable.push_back(spec + ": " + e.status().message());
          continue;
        }
        if (!kind.empty()) {
          e->kind = kind;
        }
        if (kind == "memory-data") {
          e->scale = kDramBytesPerBeat;  // DF counts 64-byte beats; sysfs has no .scale for them.
        }
        if (e->hardware && e->scope == PmuEventScope::kCpu && !have_core) {
          missing.push_back(spec);
          continue;
        }
        add(std::move(*e));
      }
      if (!missing.empty()) {
        out.unavailable.push_back("preset " + item + " (" + Join(missing, ", ") +
                                  "): no hardware PMU");
      }
      continue;
    }
    StatusOr<PmuEvent> e = ResolvePmuEvent(host, item);
    if (!e.ok()) {
      if (e.status().code() == StatusCode::kNotFound) {
        out.unavailable.push_back(item + ": " + e.status().message());
        continue;
      }
      return e.status();
    }
    if (e->hardware && e->scope == PmuEventScope::kCpu && !have_core &&
        (e->type == PERF_TYPE_HARDWARE || e->type == PERF_TYPE_HW_CACHE ||
         e->type == PERF_TYPE_RAW)) {
      out.unavailable.push_back(item + ": no hardware PMU");
      continue;
    }
    add(std::move(*e));
    if (out.events.size() > kMaxEventsInList) {
      return InvalidArgumentError("at most " + std::to_string(kMaxEventsInList) +
                                  " PMU events may be configured");
    }
  }
  return out;
}

}  // namespace vigil
