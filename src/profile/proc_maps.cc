// SPDX-License-Identifier: Apache-2.0
#include "profile/proc_maps.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {
namespace {

std::optional<uint64_t> ParseHex(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "7f12a000-7f12b000 r-xp 00001000 fd:01 1234   /usr/lib/x.so" (the path may hold spaces).
std::optional<Mapping> ParseLine(std::string_view line) {
  std::string_view rest = line;
  std::string_view range, perms, offset, device, inode;
  if (!NextField(&rest, &range) || !NextField(&rest, &perms) || !NextField(&rest, &offset) ||
      !NextField(&rest, &device) || !NextField(&rest, &inode)) {
    return std::nullopt;
  }
  size_t dash = range.find('-');
  if (dash == std::string_view::npos || perms.size() < 4) return std::nullopt;
  auto start = ParseHex(range.substr(0, dash));
  auto end = ParseHex(range.substr(dash + 1));
  auto file_offset = ParseHex(offset);
  auto inode_number = ParseUint64(inode);
  if (!start || !end || !file_offset || !inode_number || *end < *start) return std::nullopt;
  Mapping m;
  m.start = *start;
  m.end = *end;
  m.file_offset = *file_offset;
  m.readable = perms[0] == 'r';
  m.writable = perms[1] == 'w';
  m.executable = perms[2] == 'x';
  m.device = std::string(device);
  m.inode = *inode_number;
  m.path = std::string(Trim(rest));
  return m;
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<Mapping> ParseProcMaps(std::string_view text) {
  std::vector<Mapping> maps;
  std::string_view line;
  while (NextLine(&text, &line)) {
    if (auto m = ParseLine(line)) maps.push_back(std::move(*m));
  }
  std::sort(maps.begin(), maps.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  return maps;
}

StatusOr<std::vector<Mapping>> ReadProcMaps(int pid, std::string_view proc_root) {
  std::string path = JoinPath(proc_root, std::to_string(pid) + "/maps");
  // A large process (PyTorch with its CUDA libraries) has a few thousand mappings; 64 MiB is far
  // above any real maps file and still bounds a hostile one.
  auto text = ReadSmallFile(path, 64 << 20);
  if (!text.ok()) return text.status();
  return ParseProcMaps(*text);
}

std::string MappedFilePath(int pid, std::string_view path, std::string_view proc_root) {
  std::string out = JoinPath(proc_root, std::to_string(pid) + "/root");
  if (path.empty() || path.front() != '/') out += '/';
  out += path;
  return out;
}

const Mapping* FindMapping(const std::vector<Mapping>& maps, uint64_t address) {
  auto it = std::upper_bound(maps.begin(), maps.end(), address,
                             [](uint64_t a, const Mapping& m) { return a < m.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  return it->Contains(address) ? &*it : nullptr;
}

std::optional<Mapping> FindMappedLibrary(const std::vector<Mapping>& maps,
                                         std::string_view prefix) {
  for (const Mapping& m : maps) {
    if (!m.IsFile()) continue;
    std::string_view base = Basename(m.path);
    // " (deleted)" marks a file replaced on disk since it was mapped; it is still the one in use.
    if (base.substr(0, prefix.size()) == prefix) return m;
  }
  return std::nullopt;
}

std::string ExecutablePath(int pid, std::string_view proc_root) {
  std::string link = JoinPath(proc_root, std::to_string(pid) + "/exe");
  char buffer[PATH_MAX];
  ssize_t n = readlink(link.c_str(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<size_t>(n));
}

}  // namespace vigil
