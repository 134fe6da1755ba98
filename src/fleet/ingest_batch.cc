// SPDX-License-Identifier: Apache-2.0
#include "fleet/ingest_batch.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <simdjson.h>

namespace vigil {

namespace {

// simdjson's DOM parser: every pushed batch is parsed on an HTTP thread and parsing was the
// largest CPU cost of ingest with nlohmann::json (a tree of heap nodes per value). One parser per
// thread keeps its buffers between batches.
simdjson::dom::parser& ThreadParser() {
  thread_local simdjson::dom::parser parser;
  return parser;
}

StatusOr<std::string> RequiredString(simdjson::dom::object obj, const char* key) {
  std::string_view v;
  if (obj[key].get_string().get(v) != simdjson::SUCCESS || v.empty() || v.size() > 256) {
    return InvalidArgumentError(std::string("batch: \"") + key +
                                "\" must be a non-empty string of at most 256 bytes");
  }
  return std::string(v);
}

// An integer field: int64, or a uint64 that fits, or a double with an exact integer value is not
// accepted (time_ns must not lose precision on the way).
bool GetInt64(simdjson::dom::element e, int64_t* out) {
  if (e.is_int64()) {
    *out = int64_t(e.get_int64());
    return true;
  }
  return false;
}

Status ParseSample(simdjson::dom::element e, size_t i, IngestSample* out) {
  const std::string where = "batch: samples[" + std::to_string(i) + "]";
  simdjson::dom::object s;
  if (e.get_object().get(s) != simdjson::SUCCESS) {
    return InvalidArgumentError(where + " is not an object");
  }
  std::string_view name;
  if (s["name"].get_string().get(name) != simdjson::SUCCESS || name.empty()) {
    return InvalidArgumentError(where + ": \"name\" must be a non-empty string");
  }
  simdjson::dom::element value;
  if (s["value"].get(value) != simdjson::SUCCESS || !value.is_number()) {
    return InvalidArgumentError(where + ": \"value\" must be a number");
  }
  simdjson::dom::element time;
  if (s["time_ns"].get(time) != simdjson::SUCCESS || !GetInt64(time, &out->time_ns)) {
    return InvalidArgumentError(where + ": \"time_ns\" must be an integer");
  }
  out->name = std::string(name);
  out->value = value.is_double()  ? double(value.get_double())
               : value.is_int64() ? static_cast<double>(int64_t(value.get_int64()))
                                  : static_cast<double>(uint64_t(value.get_uint64()));
  if (!std::isfinite(out->value)) {
    return InvalidArgumentError(where + ": \"value\" must be finite");
  }
  simdjson::dom::element kind;
  if (s["kind"].get(kind) == simdjson::SUCCESS) {
    std::string_view k;
    if (kind.get_string().get(k) != simdjson::SUCCESS) {
      return InvalidArgumentError(where + ": \"kind\" must be a string");
    }
    out->counter = k == "counter";
  }
  simdjson::dom::element labels;
  if (s["labels"].get(labels) == simdjson::SUCCESS) {
    simdjson::dom::object obj;
    if (labels.get_object().get(obj) != simdjson::SUCCESS) {
      return InvalidArgumentError(where + ": \"labels\" must be an object");
    }
    out->labels.reserve(obj.size());
    for (simdjson::dom::key_value_pair kv : obj) {
      std::string_view v;
      if (kv.value.get_string().get(v) != simdjson::SUCCESS) {
        return InvalidArgumentError(where + ": label \"" + std::string(kv.key) +
                                    "\" is not a string");
      }
      out->labels.emplace_back(std::string(kv.key), std::string(v));
    }
    std::sort(out->labels.begin(), out->labels.end());
    for (size_t j = 1; j < out->labels.size(); ++j) {
      if (out->labels[j].first == out->labels[j - 1].first) {
        return InvalidArgumentError(where + ": label \"" + out->labels[j].first +
                                    "\" appears twice");
      }
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<IngestBatch> ParseIngestBatch(std::string_view json) {
  simdjson::dom::element doc;
  simdjson::dom::object root;
  if (ThreadParser().parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(root) != simdjson::SUCCESS) {
    return InvalidArgumentError("batch: body is not a JSON object");
  }
  IngestBatch batch;
  VIGIL_ASSIGN_OR_RETURN(batch.host, RequiredString(root, "host"));
  VIGIL_ASSIGN_OR_RETURN(batch.batch_id, RequiredString(root, "batch_id"));
  simdjson::dom::element seq;
  if (root["seq"].get(seq) == simdjson::SUCCESS && !GetInt64(seq, &batch.seq)) {
    return InvalidArgumentError("batch: \"seq\" must be an integer");
  }
  simdjson::dom::array samples;
  if (root["samples"].get_array().get(samples) != simdjson::SUCCESS) {
    return InvalidArgumentError("batch: \"samples\" must be an array");
  }
  batch.samples.resize(samples.size());
  size_t i = 0;
  for (simdjson::dom::element e : samples) {
    VIGIL_RETURN_IF_ERROR(ParseSample(e, i, &batch.samples[i]));
    ++i;
  }
  return batch;
}

}  // namespace vigil
