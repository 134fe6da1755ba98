// SPDX-License-Identifier: Apache-2.0
// Parsers for the per-process files the resolver and the process collector read:
// /proc/<pid>/stat, /proc/<pid>/status and /proc/<pid>/environ. Pure functions on text (no file
// access), so they are tested on strings and safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// The fields of /proc/<pid>/stat that Vigil uses (field numbers as in proc(5)).
struct ProcStat {
  int pid = 0;                   // 1
  std::string comm;              // 2, without the parentheses; may contain spaces and ')'.
  char state = '?';              // 3
  int ppid = 0;                  // 4
  uint64_t utime_ticks = 0;      // 14, clock ticks (sysconf(_SC_CLK_TCK))
  uint64_t stime_ticks = 0;      // 15
  int64_t num_threads = 0;       // 20
  uint64_t starttime_ticks = 0;  // 22, ticks after boot: with the pid, identifies the process.
  int64_t rss_pages = 0;         // 24
};

// InvalidArgument-free: returns nullopt when the text is not a stat line.
std::optional<ProcStat> ParseProcStat(std::string_view text);

// The fields of /proc/<pid>/status that Vigil uses.
struct ProcStatus {
  std::string name;
  int ppid = -1;
  int64_t uid = -1;     // Real uid (first number of "Uid:"); -1 when absent.
  int64_t vm_rss = -1;  // Bytes ("VmRSS: 1234 kB"); -1 for kernel threads.
  int64_t threads = -1;
};

ProcStatus ParseProcStatus(std::string_view text);

// Parses NUL-separated KEY=VALUE entries (/proc/<pid>/environ), keeping only keys in
// `allow_list`. Entries without '=' are skipped; for a repeated key the first wins, as getenv().
std::map<std::string, std::string> ParseEnviron(std::string_view text,
                                                const std::vector<std::string>& allow_list);

// Replaces the NULs of /proc/<pid>/cmdline with spaces, dropping the trailing one.
std::string CmdlineToString(std::string_view raw);

}  // namespace vigil
