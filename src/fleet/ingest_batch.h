// SPDX-License-Identifier: Apache-2.0
// The fleet push wire format (docs/protocols.md "Fleet push"): one JSON object per POST,
//   {"host":"node01","batch_id":"node01-1764410994-42","seq":42,
//    "samples":[{"name":"vigil_gpu_allocated_seconds_total","kind":"counter",
//                "labels":{"gpu_uuid":"GPU-..","job_id":"7"},"value":12.5,"time_ns":1764...}]}
// optionally gzip-compressed (Content-Encoding: gzip). Parsing is strict about types and bounded
// in size; a bad batch is InvalidArgument with the reason. Owner: fleet. Value types; the parse
// functions are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/gzip.h"  // Gunzip, for the callers that inflate pushed bodies.
#include "base/status.h"
#include "metrics/metric.h"

namespace vigil {

struct IngestSample {
  std::string name;
  bool counter = false;
  Labels labels;  // Sorted by name.
  double value = 0;
  int64_t time_ns = 0;
};

struct IngestBatch {
  std::string host;
  std::string batch_id;
  int64_t seq = 0;
  std::vector<IngestSample> samples;
};

// Parses a batch. host and batch_id must be non-empty strings (at most 256 bytes), every sample
// needs a string name, a number value and an integer time_ns; kind defaults to gauge.
StatusOr<IngestBatch> ParseIngestBatch(std::string_view json);

}  // namespace vigil
