// SPDX-License-Identifier: Apache-2.0
#include "trace/report/chrome_trace_merge.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "base/file_util.h"
#include "base/gzip.h"
#include "base/strings.h"
#include "trace/reader/decimal_time.h"

namespace vigil::trace {
namespace {

namespace od = simdjson::ondemand;

constexpr size_t kMaxTraceBytes = size_t{4} << 30;

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' ||
                        s.back() == '\t' || s.back() == ',')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Micros(int64_t ns) {
  const bool negative = ns < 0;
  const uint64_t abs = negative ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", abs / 1000, abs % 1000);
}

// The JSON text of any value (objects and arrays whole).
simdjson::error_code RawValue(od::value& v, std::string_view* out) {
  od::json_type type;
  if (auto err = v.type().get(type)) return err;
  if (type == od::json_type::object) {
    od::object o;
    if (auto err = v.get_object().get(o)) return err;
    return o.raw_json().get(*out);
  }
  if (type == od::json_type::array) {
    od::array a;
    if (auto err = v.get_array().get(a)) return err;
    return a.raw_json().get(*out);
  }
  *out = TrimRight(v.raw_json_token());
  return simdjson::SUCCESS;
}

// One event object, re-written with its ts shifted.
Status AppendEvent(od::value& event, int64_t shift_ns, size_t index, std::string* out) {
  od::object obj;
  if (event.get_object().get(obj)) {
    return InvalidArgumentError(fmt::format("event {}: not an object", index));
  }
  out->push_back('{');
  bool first = true;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key)) {
      return InvalidArgumentError(fmt::format("event {}: bad key", index));
    }
    const std::string name(key);  // The key's text lives only until the value is read.
    od::value v;
    std::string_view raw;
    if (field.value().get(v) || RawValue(v, &raw)) {
      return InvalidArgumentError(fmt::format("event {}: bad value of \"{}\"", index, name));
    }
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(name, out);
    out->push_back(':');
    if (name == "ts") {
      int64_t ns = 0;
      bool fraction = false;
      if (!ParseMicrosToNanos(raw, &ns, &fraction)) {
        return InvalidArgumentError(fmt::format("event {}: ts is not a number: {}", index, raw));
      }
      out->append(Micros(ns - shift_ns));
    } else {
      out->append(raw);
    }
  }
  out->push_back('}');
  return OkStatus();
}

}  // namespace

StatusOr<size_t> AppendChromeTraceEvents(std::string_view extra, int64_t shift_ns,
                                         std::string* perfetto_json) {
  std::string_view doc_end = TrimRight(*perfetto_json);
  while (!doc_end.empty() && (doc_end.back() == '\n' || doc_end.back() == ' ')) {
    doc_end.remove_suffix(1);
  }
  if (!doc_end.ends_with("]}")) {
    return InternalError("merge: the Perfetto output does not end with its event array");
  }
  const size_t insert_at = doc_end.size() - 2;
  const std::string_view before = TrimRight(doc_end.substr(0, insert_at));
  const bool base_has_events = !before.empty() && before.back() != '[';

  simdjson::padded_string padded(extra);
  od::parser parser;
  od::document doc;
  if (parser.iterate(padded).get(doc)) {
    return InvalidArgumentError("not JSON");
  }
  od::array events;
  od::json_type type;
  if (doc.type().get(type)) {
    return InvalidArgumentError("not JSON");
  }
  if (type == od::json_type::array) {
    if (doc.get_array().get(events)) return InvalidArgumentError("not a JSON array");
  } else if (doc["traceEvents"].get_array().get(events)) {
    return InvalidArgumentError("no traceEvents array");
  }
  std::string added;
  size_t count = 0;
  for (auto element : events) {
    od::value event;
    if (element.get(event)) {
      return InvalidArgumentError(fmt::format("event {}: not JSON", count));
    }
    added += count > 0 || base_has_events ? ",\n" : "\n";
    VIGIL_RETURN_IF_ERROR(AppendEvent(event, shift_ns, count, &added));
    ++count;
  }
  perfetto_json->insert(insert_at, added);
  return count;
}

StatusOr<size_t> MergeChromeTraceFile(const std::string& path, int64_t shift_ns,
                                      std::string* perfetto_json) {
  StatusOr<std::string> text = ReadSmallFile(path, kMaxTraceBytes);
  if (!text.ok()) {
    return text.status();
  }
  if (IsGzip(*text)) {
    StatusOr<std::string> inflated = Gunzip(*text, kMaxTraceBytes);
    if (!inflated.ok()) {
      return InvalidArgumentError(path + ": " + inflated.status().message());
    }
    *text = std::move(*inflated);
  }
  StatusOr<size_t> added = AppendChromeTraceEvents(*text, shift_ns, perfetto_json);
  if (!added.ok()) {
    return InvalidArgumentError(path + ": " + added.status().message());
  }
  return added;
}

}  // namespace vigil::trace
