// SPDX-License-Identifier: Apache-2.0
#include "trace/testing/tracelens_reference.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace vigil::trace::testing {
namespace {

namespace fs = std::filesystem;

// RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(std::move(field));
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

void SkipSpaces(std::string_view t, size_t* i) {
  while (*i < t.size() && (t[*i] == ' ' || t[*i] == '\t')) ++(*i);
}

// One Python string literal starting at t[*i] (single or double quotes).
bool ParseQuoted(std::string_view t, size_t* i, std::string* out) {
  char q = t[*i];
  out->clear();
  for (++(*i); *i < t.size(); ++(*i)) {
    if (t[*i] == '\\' && *i + 1 < t.size()) {
      *out += t[++(*i)];
    } else if (t[*i] == q) {
      ++(*i);
      return true;
    } else {
      *out += t[*i];
    }
  }
  return false;
}

double Number(const std::string& s) { return s.empty() ? -1 : std::strtod(s.c_str(), nullptr); }

}  // namespace

namespace {

// "[a, b, ...]" starting at t[*i], calling `element` at each item; *i ends after the ']'.
template <typename Element>
bool ParseBracketList(std::string_view t, size_t* i, Element element) {
  SkipSpaces(t, i);
  if (*i >= t.size() || t[*i] != '[') return false;
  ++(*i);
  for (;;) {
    SkipSpaces(t, i);
    if (*i >= t.size()) return false;
    if (t[*i] == ']') {
      ++(*i);
      return true;
    }
    if (t[*i] == ',') {
      ++(*i);
      continue;
    }
    if (!element(i)) return false;
  }
}

}  // namespace

bool ParseDimsList(std::string_view t, std::vector<std::vector<int64_t>>* out) {
  out->clear();
  size_t i = 0;
  return ParseBracketList(t, &i, [&](size_t* at) {
    std::vector<int64_t> dims;
    bool ok = ParseBracketList(t, at, [&](size_t* j) {
      std::string rest(t.substr(*j, 32));
      char* end = nullptr;
      long long v = std::strtoll(rest.c_str(), &end, 10);
      if (end == rest.c_str()) return false;
      dims.push_back(v);
      *j += static_cast<size_t>(end - rest.c_str());
      return true;
    });
    out->push_back(std::move(dims));
    return ok;
  });
}

bool ParseStringList(std::string_view t, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0;
  return ParseBracketList(t, &i, [&](size_t* at) {
    std::string s;
    if (t[*at] == '\'' || t[*at] == '"') {
      if (!ParseQuoted(t, at, &s)) return false;
    } else {
      // A bare literal (None, numbers): up to the next comma or bracket.
      while (*at < t.size() && t[*at] != ',' && t[*at] != ']') s += t[(*at)++];
      while (!s.empty() && s.back() == ' ') s.pop_back();
    }
    out->push_back(std::move(s));
    return true;
  });
}

std::vector<TraceLensRow> LoadTraceLensRows(const std::string& root, std::string* error) {
  static const char* kSummaries[] = {"gpu_timeline",    "kernel_summary", "ops_summary",
                                     "ops_unique_args", "short_kernel",   "unified_"};
  std::vector<TraceLensRow> out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path& p = entry.path();
    std::string dir = p.parent_path().filename().string();
    if (p.extension() != ".csv") continue;
    if (dir != "perf_csvs" &&
        (dir.size() < 17 || dir.substr(dir.size() - 17) != "_perf_report_csvs"))
      continue;
    std::string stem = p.stem().string();
    bool summary = std::any_of(std::begin(kSummaries), std::end(kSummaries),
                               [&](const char* s) { return stem.rfind(s, 0) == 0; });
    if (!summary) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    auto rows = ParseCsv(buf.str());
    if (rows.empty()) continue;
    std::map<std::string, size_t> col;
    for (size_t c = 0; c < rows[0].size(); ++c) col[rows[0][c]] = c;
    auto get = [&](const std::vector<std::string>& r, const char* k) -> std::string {
      auto it = col.find(k);
      return it == col.end() || it->second >= r.size() ? std::string() : r[it->second];
    };
    std::string rel = fs::relative(p, root).string();
    for (size_t r = 1; r < rows.size(); ++r) {
      TraceLensRow row;
      row.file = rel;
      row.line = static_cast<int>(r);
      row.category = p.stem().string();
      row.name = get(rows[r], "name");
      row.gflops = Number(get(rows[r], "GFLOPS_first"));
      row.data_mb = Number(get(rows[r], "Data Moved (MB)_first"));
      row.compute_spec = get(rows[r], "Compute Spec");
      row.count = static_cast<int>(Number(get(rows[r], "name_count")));
      row.kernel_us_sum = Number(get(rows[r], "Kernel Time (µs)_sum"));
      bool ok = ParseDimsList(get(rows[r], "Input Dims_first"), &row.inputs.dims) &&
                ParseStringList(get(rows[r], "Input type_first"), &row.inputs.types) &&
                ParseDimsList(get(rows[r], "Input Strides_first"), &row.inputs.strides) &&
                ParseStringList(get(rows[r], "Concrete Inputs_first"), &row.inputs.concrete);
      // What TraceLens took from outside the operator's inputs, as its report records it:
      // the serving step's token counts (from the step annotation) and the MoE routing (from
      // the TopK operator and the kernel names).
      if (!get(rows[r], "param: c_sq").empty()) {
        auto n = [&](const char* k) { return Number(get(rows[r], k)); };
        row.inputs.step = ServingStep{n("param: c_sq"),   n("param: c_sk"),   n("param: c_sqsq"),
                                      n("param: c_sqsk"), n("param: g_sq"),   n("param: g_sk"),
                                      n("param: g_sqsq"), n("param: g_sqsk"), true};
      }
      if (!get(rows[r], "param: topk").empty()) {
        row.inputs.moe =
            MoeRouting{static_cast<int>(Number(get(rows[r], "param: topk"))),
                       get(rows[r], "param: weight_dtype"), get(rows[r], "param: gated") == "True"};
      }
      if (!ok && error != nullptr) {
        *error = rel + ":" + std::to_string(r) + ": cannot parse the recorded inputs";
        return out;
      }
      out.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace vigil::trace::testing
