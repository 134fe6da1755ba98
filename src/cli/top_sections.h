// SPDX-License-Identifier: Apache-2.0
// The sections of a `vigil top` frame (top_view.h), one file each: host lines (top_host.cc),
// processes of interest (top_processes.cc), GPUs and their processes (top_gpu.cc). Each returns
// "" when its series are absent, except the GPU section, which says so in one line. Shared
// helpers for reading series live here too. Pure functions; thread-compatible.
#pragma once

#include <limits>
#include <string>

#include "cli/top_view.h"

namespace vigil::top {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Label(const SeriesView& s, const std::string& name);
// The counter's per-second rate this frame, NaN when unknown.
double Rate(const TopData& d, const SeriesView& s);

// `width`: wrap or shorten lines for a terminal this wide (0 = no limit).
std::string HostLines(const TopData& d, int width);
std::string CgroupTable(const TopData& d, const TopLayout& layout);
std::string ProcessTable(const TopData& d, const TopLayout& layout);
std::string GpuSection(const TopData& d, const TopLayout& layout);

}  // namespace vigil::top
