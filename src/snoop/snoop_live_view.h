// SPDX-License-Identifier: Apache-2.0
// One frame of the live view `vigil snoop` draws on a terminal while it traces: a header (time,
// processes, events, sampling), one row per process (launch rate, sync calls and the share of
// the interval spent blocked in them, outstanding and peak device bytes) and the kernels with the
// highest launch rate. Rates are differences between two snapshots of the session a known
// interval apart. Plain text: the caller adds the terminal escapes. Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "snoop/snoop_summary.h"

namespace vigil::snoop {

struct LiveFrame {
  const SessionSummary* previous = nullptr;  // Snapshot one interval ago; null on the first frame.
  const SessionSummary* current = nullptr;   // Required.
  double interval_seconds = 1;               // Between the two snapshots (> 0).
  size_t width = 0;                          // Terminal columns (0: no limit).
  size_t height = 0;                         // Terminal rows (0: no limit).
};

std::string RenderSnoopLive(const LiveFrame& frame);

}  // namespace vigil::snoop
