// SPDX-License-Identifier: Apache-2.0
// Drop accounting shared by the sinks: what was lost, in batches (or payloads) and in samples, so
// `vigil status`, the vigil_daemon_sink_dropped_batches_total metric and the fault tests can check
// that sent + dropped = consumed. Plain value type.
#pragma once

#include <cstdint>

namespace vigil {

struct DropCounts {
  uint64_t batches = 0;  // Batches, or encoded payloads once a batch has been encoded.
  uint64_t samples = 0;

  void Add(uint64_t batch_count, uint64_t sample_count) {
    batches += batch_count;
    samples += sample_count;
  }
  DropCounts& operator+=(const DropCounts& other) {
    Add(other.batches, other.samples);
    return *this;
  }
};

}  // namespace vigil
