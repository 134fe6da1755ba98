// SPDX-License-Identifier: Apache-2.0
#include "trace/testing/recorded_bandwidth.h"

#include <string>

#include <simdjson.h>
#include <zlib.h>

namespace vigil::trace::testing {
namespace {

StatusOr<std::string> ReadAll(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (f == nullptr) return NotFoundError("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  if (n < 0) return DataLossError("cannot inflate " + path);
  return out;
}

}  // namespace

StatusOr<std::unordered_map<uint32_t, double>> RecordedBandwidths(const RankTrace& t) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadAll(t.path));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) != simdjson::SUCCESS) return DataLossError("bad JSON " + t.path);
  simdjson::dom::array events;
  if (doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    return DataLossError("no traceEvents in " + t.path);
  }
  std::unordered_map<uint32_t, double> out;
  uint32_t row = 0;
  for (simdjson::dom::element ev : events) {
    std::string_view ph, cat, name;
    bool has_ph = ev["ph"].get_string().get(ph) == simdjson::SUCCESS;
    if (has_ph && ph != "X") continue;
    if (ev["ts"].error() || ev["dur"].error()) continue;
    if (ev["cat"].get_string().get(cat) != simdjson::SUCCESS) continue;
    bool known = true;
    EventKind kind = KindFromCategory(cat, &known);
    if (kind == EventKind::kPythonFunction && !t.keep_python_functions) continue;
    if (row >= t.events.size()) return FailedPreconditionError("more rows than the model");
    if (ev["name"].get_string().get(name) != simdjson::SUCCESS) name = {};
    if (t.strings.Get(t.events.name[row]) != name) {
      return FailedPreconditionError("row " + std::to_string(row) + " is not " + std::string(name));
    }
    double bw = 0;
    if (ev["args"]["memory bandwidth (GB/s)"].get_double().get(bw) == simdjson::SUCCESS) {
      out[row] = bw;
    }
    ++row;
  }
  return out;
}

}  // namespace vigil::trace::testing
