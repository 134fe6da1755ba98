// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/vector_operands.h"

#include <charconv>
#include <string>

#include "trace/analysis/work_model/dtypes.h"

namespace vigil::trace {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `item` on each comma-separated element of "[a, b, c]" (or of a bare "a").
template <typename Fn>
bool ForEachListItem(std::string_view text, Fn item) {
  text = Trim(text);
  if (text.empty()) return false;
  if (text.front() == '[') {
    if (text.back() != ']') return false;
    text = Trim(text.substr(1, text.size() - 2));
    if (text.empty()) return true;
  }
  while (true) {
    size_t comma = text.find(',');
    if (!item(Trim(text.substr(0, comma)))) return false;
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

const std::vector<int64_t>& InputDims(const OpInputs& in, size_t i) {
  static const std::vector<int64_t> kNone;
  return i < in.dims.size() ? in.dims[i] : kNone;
}

std::string_view InputType(const OpInputs& in, size_t i) {
  return i < in.types.size() ? std::string_view(in.types[i]) : std::string_view();
}

std::string_view InputConcrete(const OpInputs& in, size_t i) {
  return i < in.concrete.size() ? std::string_view(in.concrete[i]) : std::string_view();
}

std::optional<int> OperandBytes(std::string_view type) {
  if (type == "Scalar") return 4;
  int size = BytesPerElement(type);
  if (size <= 0) return std::nullopt;
  return size;
}

ComputeSpec VectorSpec(std::string_view dtype) {
  if (dtype == "float") return ComputeSpec::kVectorFp32;
  if (dtype == "c10::BFloat16") return ComputeSpec::kVectorBf16;
  if (dtype == "c10::Half") return ComputeSpec::kVectorFp16;
  if (dtype == "double") return ComputeSpec::kVectorFp64;
  return ComputeSpec::kUnknown;
}

bool ParseIntList(std::string_view text, std::vector<int64_t>* out) {
  out->clear();
  return ForEachListItem(text, [out](std::string_view s) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return false;
    out->push_back(v);
    return true;
  });
}

bool ParseBoolList(std::string_view text, std::vector<bool>* out) {
  out->clear();
  return ForEachListItem(text, [out](std::string_view s) {
    if (s != "True" && s != "False") return false;
    out->push_back(s == "True");
    return true;
  });
}

bool ParseNumberList(std::string_view text, std::vector<double>* out) {
  out->clear();
  if (Trim(text).empty() || Trim(text).front() != '[') return false;
  return ForEachListItem(text, [out](std::string_view s) {
    std::optional<double> v = ParseNumber(s);
    if (v) out->push_back(*v);
    return v.has_value();
  });
}

std::optional<double> ParseNumber(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace vigil::trace
