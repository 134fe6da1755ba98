// SPDX-License-Identifier: Apache-2.0
#include "attribution/proc_pid_files.h"

#include <algorithm>
#include <limits>

#include "base/strings.h"

namespace vigil {

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  // "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so split at the last ')'.
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcStat out;
  auto pid = ParseInt64(Trim(text.substr(0, open)));
  if (!pid) {
    return std::nullopt;
  }
  out.pid = static_cast<int>(*pid);
  out.comm = std::string(text.substr(open + 1, close - open - 1));
  std::vector<std::string_view> f = SplitWhitespace(Trim(text.substr(close + 1)));
  // f[0] is field 3 (state), so field N is f[N - 3].
  if (f.size() < 22) {
    return std::nullopt;
  }
  out.state = f[0].empty() ? '?' : f[0][0];
  auto ppid = ParseInt64(f[4 - 3]);
  auto utime = ParseUint64(f[14 - 3]);
  auto stime = ParseUint64(f[15 - 3]);
  auto threads = ParseInt64(f[20 - 3]);
  auto start = ParseUint64(f[22 - 3]);
  auto rss = ParseInt64(f[24 - 3]);
  if (!ppid || !utime || !stime || !threads || !start || !rss) {
    return std::nullopt;
  }
  out.ppid = static_cast<int>(*ppid);
  out.utime_ticks = *utime;
  out.stime_ticks = *stime;
  out.num_threads = *threads;
  out.starttime_ticks = *start;
  out.rss_pages = *rss;
  return out;
}

ProcStatus ParseProcStatus(std::string_view text) {
  ProcStatus out;
  std::string_view line;
  while (NextLine(&text, &line)) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    std::string_view key = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1));
    std::string_view first;
    std::string_view rest = value;
    NextField(&rest, &first);
    if (key == "Name") {
      out.name = std::string(value);
    } else if (key == "PPid") {
      out.ppid = static_cast<int>(ParseInt64(first).value_or(-1));
    } else if (key == "Uid") {
      out.uid = ParseInt64(first).value_or(-1);
    } else if (key == "VmRSS") {
      // A size no kernel prints (negative, or past int64 in bytes) is unknown, not UB.
      auto kb = ParseInt64(first);
      const bool sane = kb && *kb >= 0 && *kb <= std::numeric_limits<int64_t>::max() / 1024;
      out.vm_rss = sane ? *kb * 1024 : -1;
    } else if (key == "Threads") {
      out.threads = ParseInt64(first).value_or(-1);
    }
  }
  return out;
}

std::map<std::string, std::string> ParseEnviron(std::string_view text,
                                                const std::vector<std::string>& allow_list) {
  std::map<std::string, std::string> out;
  if (allow_list.empty()) {
    return out;
  }
  for (std::string_view entry : Split(text, '\0')) {
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      continue;
    }
    std::string key(entry.substr(0, eq));
    if (std::find(allow_list.begin(), allow_list.end(), key) == allow_list.end()) {
      continue;
    }
    out.emplace(std::move(key), std::string(entry.substr(eq + 1)));  // First one wins.
  }
  return out;
}

std::string CmdlineToString(std::string_view raw) {
  while (!raw.empty() && raw.back() == '\0') {
    raw.remove_suffix(1);
  }
  std::string out(raw);
  std::replace(out.begin(), out.end(), '\0', ' ');
  return out;
}

}  // namespace vigil
