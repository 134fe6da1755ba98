// SPDX-License-Identifier: Apache-2.0
#include "profile/symbolizer.h"

#include <algorithm>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

// x86-64 and arm64 kernels live in the upper half of the address space.
constexpr uint64_t kKernelStart = 0xffff800000000000ull;
constexpr size_t kMaxPerfMapBytes = 64 << 20;

struct NamedRange {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;
};

// Sorted ranges; the one containing `address`, or nullptr. A size of 0 covers up to the next.
const NamedRange* RangeAt(const std::vector<NamedRange>& ranges, uint64_t address) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), address,
                             [](uint64_t a, const NamedRange& r) { return a < r.start; });
  if (it == ranges.begin()) return nullptr;
  const NamedRange& r = *std::prev(it);
  if (r.size > 0 && address >= r.start + r.size) return nullptr;
  if (r.size == 0 && it == ranges.end()) return nullptr;
  return &r;
}

std::optional<uint64_t> Hex(std::string_view text) {
  if (text.substr(0, 2) == "0x") text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  return v;
}

// perf-PID.map lines: "START SIZE name with spaces", hex without 0x.
std::vector<NamedRange> ParsePerfMap(std::string_view text) {
  std::vector<NamedRange> ranges;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view rest = line, start, size;
    if (!NextField(&rest, &start) || !NextField(&rest, &size)) continue;
    auto s = Hex(start);
    auto n = Hex(size);
    if (!s || !n) continue;
    ranges.push_back({*s, *n, std::string(Trim(rest))});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const NamedRange& a, const NamedRange& b) { return a.start < b.start; });
  return ranges;
}

// /proc/kallsyms: "ffffffff81000000 T _stext [module]"; text symbols only.
std::vector<NamedRange> ParseKallsyms(std::string_view text) {
  std::vector<NamedRange> ranges;
  std::string_view line;
  while (NextLine(&text, &line)) {
    std::string_view rest = line, address, type, name;
    if (!NextField(&rest, &address) || !NextField(&rest, &type) || !NextField(&rest, &name)) {
      continue;
    }
    if (type != "T" && type != "t") continue;
    auto a = Hex(address);
    if (!a || *a == 0) continue;  // Zeroed addresses: kptr_restrict hides them.
    ranges.push_back({*a, 0, std::string(name)});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const NamedRange& a, const NamedRange& b) { return a.start < b.start; });
  return ranges;
}

std::string Basename(std::string_view path) {
  if (size_t deleted = path.find(" (deleted)"); deleted != std::string_view::npos) {
    path = path.substr(0, deleted);
  }
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The pid of `pid` in its own namespace (last NSpid field), which names its perf map there.
std::string NamespacePid(int pid, const std::string& proc_root) {
  auto status = ReadSmallFile(JoinPath(proc_root, std::to_string(pid) + "/status"), 1 << 20);
  if (status.ok()) {
    std::string_view text = *status, line;
    while (NextLine(&text, &line)) {
      if (line.substr(0, 6) != "NSpid:") continue;
      auto fields = SplitWhitespace(line.substr(6));
      if (!fields.empty()) return std::string(fields.back());
    }
  }
  return std::to_string(pid);
}

}  // namespace

struct Symbolizer::ProcessState {
  bool maps_read = false;
  std::vector<Mapping> maps;
  bool perf_map_read = false;
  std::vector<NamedRange> perf_map;
};

struct Symbolizer::KernelSymbols {
  std::vector<NamedRange> ranges;
};

Symbolizer::Symbolizer(SymbolizerOptions options) : options_(std::move(options)) {}
Symbolizer::~Symbolizer() = default;

Symbolizer::ProcessState& Symbolizer::StateOf(int pid, bool reread) {
  auto& state = processes_[pid];
  if (!state) state = std::make_unique<ProcessState>();
  if (!state->maps_read || reread) {
    auto maps = ReadProcMaps(pid, options_.proc_root);
    state->maps = maps.ok() ? std::move(*maps) : std::vector<Mapping>{};
    state->maps_read = true;
  }
  return *state;
}

const std::vector<Mapping>& Symbolizer::MapsOf(int pid) { return StateOf(pid, false).maps; }

void Symbolizer::Forget(int pid) { processes_.erase(pid); }

const ElfImage* Symbolizer::ImageFor(int pid, const Mapping& mapping) {
  if (!mapping.IsFile()) return nullptr;
  auto key = std::make_pair(mapping.device, mapping.inode);
  if (auto it = images_.find(key); it != images_.end()) return it->second.get();
  if (failed_images_.count(key)) return nullptr;
  std::string path = mapping.path;
  if (size_t deleted = path.find(" (deleted)"); deleted != std::string::npos) path.resize(deleted);
  auto image =
      ElfImage::Load(MappedFilePath(pid, path, options_.proc_root), true, options_.debug_root);
  if (!image.ok()) {
    failed_images_[key] = true;
    return nullptr;
  }
  auto& slot = images_[key];
  slot = std::make_unique<ElfImage>(std::move(*image));
  return slot.get();
}

Frame Symbolizer::Symbolize(int pid, uint64_t address) {
  Frame frame;
  frame.function = "[unknown]";
  frame.address = address;
  if (address >= kKernelStart) {
    frame.module = "[kernel]";
    if (!kallsyms_read_) {
      kallsyms_read_ = true;
      auto text = ReadSmallFile(JoinPath(options_.proc_root, "kallsyms"), 128 << 20);
      if (text.ok())
        kallsyms_ = std::make_unique<KernelSymbols>(KernelSymbols{ParseKallsyms(*text)});
    }
    if (kallsyms_) {
      if (const NamedRange* r = RangeAt(kallsyms_->ranges, address)) {
        frame.function = r->name;
        frame.offset = address - r->start;
      }
    }
    return frame;
  }
  ProcessState* state = &StateOf(pid, false);
  const Mapping* mapping = FindMapping(state->maps, address);
  if (mapping == nullptr) {
    state = &StateOf(pid, true);  // A library loaded after the maps were read.
    mapping = FindMapping(state->maps, address);
  }
  if (mapping == nullptr) return frame;
  if (!mapping->IsFile()) {
    frame.module = mapping->path.empty() ? "[anon]" : mapping->path;
    if (!state->perf_map_read) {
      state->perf_map_read = true;
      std::string path = MappedFilePath(
          pid,
          JoinPath(options_.perf_map_dir, "perf-" + NamespacePid(pid, options_.proc_root) + ".map"),
          options_.proc_root);
      auto text = ReadSmallFile(path, kMaxPerfMapBytes);
      if (text.ok()) state->perf_map = ParsePerfMap(*text);
    }
    if (const NamedRange* r = RangeAt(state->perf_map, address)) {
      frame.module = "[jit]";
      frame.function = r->name;
      frame.offset = address - r->start;
    }
    return frame;
  }
  frame.module = Basename(mapping->path);
  const ElfImage* image = ImageFor(pid, *mapping);
  if (image == nullptr) return frame;
  auto vaddr = image->AddressOfFileOffset(mapping->FileOffsetOf(address));
  if (!vaddr) return frame;
  if (const ElfSymbol* sym = image->SymbolAt(*vaddr)) {
    frame.function = Demangle(sym->name);
    frame.offset = *vaddr - sym->address;
  }
  return frame;
}

std::vector<Frame> Symbolizer::SymbolizeStack(int pid, const std::vector<uint64_t>& addresses) {
  std::vector<Frame> frames;
  frames.reserve(addresses.size());
  for (uint64_t address : addresses) frames.push_back(Symbolize(pid, address));
  return frames;
}

}  // namespace vigil
