// SPDX-License-Identifier: Apache-2.0
#include "fleet/ledger_limits.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace vigil {
namespace {

LimitRefusal Refuse(const char* limit, const IngestBatch& batch, size_t i, std::string what,
                    size_t max) {
  return {limit, fmt::format("batch refused: host {} sample {} ({}): {}, over --{}={}",
                             SanitizeForLog(batch.host, 64), i,
                             SanitizeForLog(batch.samples[i].name, 64), what, limit, max)};
}

}  // namespace

std::optional<LimitRefusal> CheckLabelLimits(const IngestBatch& batch, const LedgerLimits& limits) {
  for (size_t i = 0; i < batch.samples.size(); ++i) {
    const Labels& labels = batch.samples[i].labels;
    if (labels.size() > limits.max_labels_per_series) {
      return Refuse("max-labels-per-series", batch, i, fmt::format("{} labels", labels.size()),
                    limits.max_labels_per_series);
    }
    size_t bytes = 0;
    for (const auto& [name, value] : labels) {
      if (name.size() > limits.max_label_name_bytes) {
        return Refuse("max-label-name-bytes", batch, i,
                      fmt::format("label name of {} bytes", name.size()),
                      limits.max_label_name_bytes);
      }
      if (value.size() > limits.max_label_value_bytes) {
        return Refuse(
            "max-label-value-bytes", batch, i,
            fmt::format("label {} has a value of {} bytes", SanitizeForLog(name, 64), value.size()),
            limits.max_label_value_bytes);
      }
      bytes += name.size() + value.size();
    }
    if (bytes > limits.max_label_bytes_per_series) {
      return Refuse("max-label-bytes-per-series", batch, i,
                    fmt::format("labels of {} bytes in all", bytes),
                    limits.max_label_bytes_per_series);
    }
  }
  return std::nullopt;
}

std::optional<LimitRefusal> CheckSeriesLimit(const std::string& host, size_t held, size_t added,
                                             const LedgerLimits& limits) {
  if (limits.max_series_per_host == 0 || held + added <= limits.max_series_per_host) {
    return std::nullopt;
  }
  return LimitRefusal{
      "max-series-per-host",
      fmt::format("batch refused: host {} holds {} series and the batch adds {}, over "
                  "--max-series-per-host={} (a series silent for the idempotency window is "
                  "forgotten)",
                  SanitizeForLog(host, 64), held, added, limits.max_series_per_host)};
}

}  // namespace vigil
