// SPDX-License-Identifier: Apache-2.0
#include "fleet/ingest_batch.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>
#include <zlib.h>

namespace vigil {

StatusOr<std::string> Gunzip(std::string_view body, size_t max_bytes) {
  z_stream zs{};
  // 15 + 32: accept both gzip and zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    return InternalError("gunzip: inflateInit2 failed");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  zs.avail_in = static_cast<uInt>(body.size());
  std::string out;
  char buf[64 << 10];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return InvalidArgumentError("gunzip: corrupt or truncated body (zlib error " +
                                  std::to_string(rc) + ")");
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      return ResourceExhaustedError("gunzip: body inflates past " + std::to_string(max_bytes) +
                                    " bytes");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return InvalidArgumentError("gunzip: truncated body");
    }
  }
  inflateEnd(&zs);
  return out;
}

namespace {

StatusOr<std::string> RequiredString(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string() || it->get_ref<const std::string&>().empty() ||
      it->get_ref<const std::string&>().size() > 256) {
    return InvalidArgumentError(std::string("batch: \"") + key +
                                "\" must be a non-empty string of at most 256 bytes");
  }
  return it->get<std::string>();
}

}  // namespace

StatusOr<IngestBatch> ParseIngestBatch(std::string_view json) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgumentError("batch: body is not a JSON object");
  }
  IngestBatch batch;
  VIGIL_ASSIGN_OR_RETURN(batch.host, RequiredString(doc, "host"));
  VIGIL_ASSIGN_OR_RETURN(batch.batch_id, RequiredString(doc, "batch_id"));
  auto seq = doc.find("seq");
  if (seq != doc.end()) {
    if (!seq->is_number_integer()) {
      return InvalidArgumentError("batch: \"seq\" must be an integer");
    }
    batch.seq = seq->get<int64_t>();
  }
  auto samples = doc.find("samples");
  if (samples == doc.end() || !samples->is_array()) {
    return InvalidArgumentError("batch: \"samples\" must be an array");
  }
  batch.samples.reserve(samples->size());
  for (size_t i = 0; i < samples->size(); ++i) {
    const nlohmann::json& s = (*samples)[i];
    const std::string where = "batch: samples[" + std::to_string(i) + "]";
    if (!s.is_object()) {
      return InvalidArgumentError(where + " is not an object");
    }
    IngestSample out;
    auto name = s.find("name");
    auto value = s.find("value");
    auto time = s.find("time_ns");
    if (name == s.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return InvalidArgumentError(where + ": \"name\" must be a non-empty string");
    }
    if (value == s.end() || !value->is_number()) {
      return InvalidArgumentError(where + ": \"value\" must be a number");
    }
    if (time == s.end() || !time->is_number_integer()) {
      return InvalidArgumentError(where + ": \"time_ns\" must be an integer");
    }
    out.name = name->get<std::string>();
    out.value = value->get<double>();
    out.time_ns = time->get<int64_t>();
    if (!std::isfinite(out.value)) {
      return InvalidArgumentError(where + ": \"value\" must be finite");
    }
    auto kind = s.find("kind");
    if (kind != s.end()) {
      if (!kind->is_string()) {
        return InvalidArgumentError(where + ": \"kind\" must be a string");
      }
      out.counter = kind->get_ref<const std::string&>() == "counter";
    }
    auto labels = s.find("labels");
    if (labels != s.end()) {
      if (!labels->is_object()) {
        return InvalidArgumentError(where + ": \"labels\" must be an object");
      }
      for (auto it = labels->begin(); it != labels->end(); ++it) {
        if (!it.value().is_string()) {
          return InvalidArgumentError(where + ": label \"" + it.key() + "\" is not a string");
        }
        out.labels.emplace_back(it.key(), it.value().get<std::string>());
      }
      // nlohmann's object is an ordered std::map, so labels arrive sorted; keep the contract.
      std::sort(out.labels.begin(), out.labels.end());
    }
    batch.samples.push_back(std::move(out));
  }
  return batch;
}

}  // namespace vigil
