// SPDX-License-Identifier: Apache-2.0
// A minimal streaming JSON writer for the reports (no DOM, no dependency): objects, arrays,
// escaped strings, integers, doubles, and nanoseconds written as exact decimal microseconds.
// The caller keeps keys and values balanced. Not thread-safe (one writer per output).
// Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::trace {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);  // null when not finite
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Nanoseconds as microseconds with exactly three decimals ("12.345"): no rounding loss.
  JsonWriter& Micros(int64_t ns);

  // Shorthands for "key": value.
  JsonWriter& Field(std::string_view k, std::string_view v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, const char* v) { return Key(k).String(v); }
  JsonWriter& Field(std::string_view k, int64_t v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, int32_t v) { return Key(k).Int(v); }
  JsonWriter& Field(std::string_view k, uint64_t v) { return Key(k).Uint(v); }
  JsonWriter& Field(std::string_view k, double v) { return Key(k).Double(v); }
  JsonWriter& Field(std::string_view k, bool v) { return Key(k).Bool(v); }
  JsonWriter& FieldMicros(std::string_view k, int64_t ns) { return Key(k).Micros(ns); }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

  static void Escape(std::string_view s, std::string* out);

 private:
  void BeforeValue();
  void Newline();
  bool pretty_;
  std::string out_;
  std::vector<bool> first_;  // per open container: no element yet
  bool after_key_ = false;
};

}  // namespace vigil::trace
