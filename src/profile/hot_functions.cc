// SPDX-License-Identifier: Apache-2.0
#include "profile/hot_functions.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace vigil {

std::vector<HotFunction> HotFunctions(const Profile& profile, size_t limit) {
  std::map<std::string, HotFunction> by_label;
  std::vector<std::string> labels;
  for (const ProfileFrame& frame : profile.frames()) {
    labels.push_back(FrameLabel(frame));
  }
  for (const auto& [ids, count] : profile.stacks()) {
    std::set<std::string> seen;
    for (size_t i = 0; i < ids.size(); ++i) {
      const ProfileFrame& frame = profile.frames()[static_cast<size_t>(ids[i])];
      if (frame.kind == FrameKind::kProcess) {
        continue;
      }
      const std::string& label = labels[static_cast<size_t>(ids[i])];
      HotFunction& row = by_label[label];
      row.label = label;
      row.module = frame.module;
      if (seen.insert(label).second) {
        row.total += count;
      }
      if (i + 1 == ids.size()) {
        row.self += count;
      }
    }
  }
  std::vector<HotFunction> rows;
  for (auto& [label, row] : by_label) {
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const HotFunction& a, const HotFunction& b) {
    return std::tie(b.self, b.total, a.label) < std::tie(a.self, a.total, b.label);
  });
  if (rows.size() > limit) {
    rows.resize(limit);
  }
  return rows;
}

std::string HotFunctionsText(const Profile& profile, size_t limit) {
  const double total = static_cast<double>(std::max<uint64_t>(profile.total_samples(), 1));
  std::string out =
      fmt::format("{:>8} {:>7} {:>8} {:>7}  {}\n", "self", "self%", "total", "total%", "function");
  for (const HotFunction& row : HotFunctions(profile, limit)) {
    out += fmt::format("{:>8} {:>6.2f}% {:>8} {:>6.2f}%  {}{}\n", row.self,
                       100.0 * static_cast<double>(row.self) / total, row.total,
                       100.0 * static_cast<double>(row.total) / total, row.label,
                       row.module.empty() ? "" : "  [" + row.module + "]");
  }
  return out;
}

}  // namespace vigil
