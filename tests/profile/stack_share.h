// SPDX-License-Identifier: Apache-2.0
// What the profile tests assert on: the share of samples whose stack, leaf first, starts with
// exactly the given frame labels; and the most common stack as text, for failure messages.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "profile/folded_output.h"
#include "profile/profile.h"

namespace vigil::testing {

inline std::vector<std::string> LeafFirstLabels(const Profile& profile,
                                                const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    out.push_back(FrameLabel(profile.frames()[static_cast<size_t>(*it)]));
  }
  return out;
}

// Samples whose leaf-first stack begins with `top` (and, if `root` is not empty, whose
// root-side end is exactly `root` leaf first).
inline double ShareWithTop(const Profile& profile, const std::vector<std::string>& top) {
  uint64_t hits = 0;
  for (const auto& [ids, count] : profile.stacks()) {
    std::vector<std::string> labels = LeafFirstLabels(profile, ids);
    if (labels.size() >= top.size() && std::equal(top.begin(), top.end(), labels.begin())) {
      hits += count;
    }
  }
  return profile.total_samples() == 0
             ? 0
             : static_cast<double>(hits) / static_cast<double>(profile.total_samples());
}

// CPU seconds (user + system) the process `pid` has used, from /proc/PID/stat; -1 if unreadable.
inline double CpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) {
    return -1;
  }
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {
    if (i == 14 || i == 15) {  // utime, stime
      ticks += std::stod(field);
    }
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The heaviest folded lines, for messages.
inline std::string TopFolded(const Profile& profile, size_t lines = 5) {
  std::vector<std::pair<uint64_t, std::string>> rows;
  for (const auto& [ids, count] : profile.stacks()) {
    std::string line;
    for (int id : ids) {
      line += (line.empty() ? "" : ";") + FoldedLabel(profile.frames()[static_cast<size_t>(id)]);
    }
    rows.emplace_back(count, line);
  }
  std::sort(rows.rbegin(), rows.rend());
  std::string out;
  for (size_t i = 0; i < rows.size() && i < lines; ++i) {
    out += std::to_string(rows[i].first) + "  " + rows[i].second + "\n";
  }
  return out;
}

}  // namespace vigil::testing
