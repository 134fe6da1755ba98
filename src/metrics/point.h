// SPDX-License-Identifier: Apache-2.0
// One stored point of a series: time (Unix ns, UTC) and value. Shared by the series store and
// its block codec. Plain value type.
#pragma once

#include <cstdint>

namespace vigil {

struct Point {
  int64_t time_ns = 0;
  double value = 0;
};

}  // namespace vigil
