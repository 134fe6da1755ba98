// SPDX-License-Identifier: Apache-2.0
// What one host may make the ledger hold (docs/fleet.md "Limits per host"): how many series its
// pushes keep state for, and how many labels, and how long, a pushed sample may carry. A host's
// token is one daemon's credential; without these, one stolen token could grow the service's
// memory and database without bound by inventing series. A batch over a limit is refused whole
// (nothing of it is stored) with a LimitRefusal that names the limit and its flag. The defaults
// are far above what a real host sends: 8 GPUs with a few hundred jobs a week each hold a few
// thousand series, with about ten short labels a sample. Owner: fleet. Value types; stateless.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "fleet/ingest_batch.h"

namespace vigil {

struct LedgerLimits {
  // Series (counter and heartbeat state) one host's pushes keep at once, until silent for the
  // idempotency window (LedgerOptions::batch_window_ns). 0 = no limit.
  size_t max_series_per_host = 50000;
  size_t max_labels_per_series = 32;
  size_t max_label_name_bytes = 128;
  size_t max_label_value_bytes = 1024;
  // The names and values of one sample's labels together.
  size_t max_label_bytes_per_series = 4096;
};

struct LimitRefusal {
  std::string limit;    // The flag's name without dashes: "max-series-per-host".
  std::string message;  // Which host, which sample, what was found and the maximum.
};

// The first sample of the batch over a label limit; nullopt when every sample is within them.
std::optional<LimitRefusal> CheckLabelLimits(const IngestBatch& batch, const LedgerLimits& limits);

// The refusal for a batch that would take `host` from `held` series to `held + added`.
std::optional<LimitRefusal> CheckSeriesLimit(const std::string& host, size_t held, size_t added,
                                             const LedgerLimits& limits);

}  // namespace vigil
