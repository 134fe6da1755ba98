// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/kernel_classifier.h"

#include <algorithm>

#include "base/strings.h"

namespace vigil::trace {
namespace {

// ASCII only, inline: kernel names are ASCII, and std::tolower (a locale-aware call per
// character) was a tenth of the whole analysis on kernel-heavy traces.
constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool ContainsIgnoreCase(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  if (needle.empty()) return true;
  const char first = AsciiLower(needle[0]);
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    if (AsciiLower(hay[i]) != first) continue;
    size_t k = 1;
    while (k < needle.size() && AsciiLower(hay[i + k]) == AsciiLower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

bool Matches(const KernelClassifier::Rule& r, std::string_view name) {
  using M = KernelClassifier::Match;
  if (r.ignore_case) {
    if (r.match == M::kContains) return ContainsIgnoreCase(name, r.text);
    if (name.size() < r.text.size()) return false;
    std::string_view part = r.match == M::kPrefix ? name.substr(0, r.text.size())
                                                  : name.substr(name.size() - r.text.size());
    return ContainsIgnoreCase(part, r.text);
  }
  switch (r.match) {
    case M::kPrefix:
      return name.substr(0, r.text.size()) == r.text;
    case M::kSuffix:
      return name.size() >= r.text.size() && name.substr(name.size() - r.text.size()) == r.text;
    case M::kContains:
      return name.find(r.text) != std::string_view::npos;
  }
  return false;
}

// HTA: ^nccl.*Kernel is communication (plus names starting with "hip", see docs).
bool HtaComm(std::string_view n) {
  if (n.substr(0, 3) == "hip") return true;
  return n.substr(0, 4) == "nccl" && n.find("Kernel", 4) != std::string_view::npos;
}

}  // namespace

std::string_view KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kCompute:
      return "COMPUTATION";
    case KernelClass::kComm:
      return "COMMUNICATION";
    case KernelClass::kMemory:
      return "MEMORY";
    case KernelClass::kOther:
      return "OTHER";
  }
  return "OTHER";
}

KernelClassifier KernelClassifier::Default() {
  KernelClassifier c;
  using K = KernelClass;
  using M = Match;
  c.rules_ = {
      {K::kComm, M::kPrefix, "nccl", true},  // ncclKernel_* (old), ncclDevKernel_* (new), RCCL
      {K::kComm, M::kPrefix, "rccl", true},
      {K::kComm, M::kContains, "hccl", true},
      {K::kComm, M::kPrefix, "hcom_", false},
      {K::kComm, M::kContains, "cross_device_reduce", false},  // vLLM custom all-reduce
      {K::kComm, M::kContains, "one_shot_all_reduce", false},  // torch symmetric memory
      {K::kComm, M::kContains, "two_shot_all_reduce", false},
      {K::kComm, M::kContains, "multimem_all_reduce", false},
      {K::kComm, M::kContains, "custom_all_reduce", false},
      {K::kComm, M::kContains, "allreduce_kernel", true},
      {K::kComm, M::kContains, "all_gather_kernel", false},
      {K::kComm, M::kContains, "msccl", true},
      {K::kMemory, M::kPrefix, "Memcpy", false},
      {K::kMemory, M::kPrefix, "Memset", false},
      {K::kMemory, M::kPrefix, "dma", false},
  };
  return c;
}

KernelClassifier KernelClassifier::HtaCompat() {
  KernelClassifier c;
  c.hta_ = true;
  return c;
}

Status KernelClassifier::AddRules(std::string_view text) {
  std::vector<Rule> added;
  std::string_view line;
  int lineno = 0;
  while (NextLine(&text, &line)) {
    ++lineno;
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    auto bad = [&] {
      return InvalidArgumentError("kernel pattern line " + std::to_string(lineno) + ": '" +
                                  std::string(line) + "'");
    };
    size_t a = line.find_first_of(" \t");
    if (a == std::string_view::npos) return bad();
    std::string_view cls = line.substr(0, a);
    std::string_view rest = Trim(line.substr(a));
    size_t b = rest.find_first_of(" \t");
    if (b == std::string_view::npos) return bad();
    std::string_view how = rest.substr(0, b);
    std::string_view pat = Trim(rest.substr(b));
    Rule r;
    if (cls == "comm")
      r.cls = KernelClass::kComm;
    else if (cls == "memory")
      r.cls = KernelClass::kMemory;
    else if (cls == "compute")
      r.cls = KernelClass::kCompute;
    else if (cls == "other")
      r.cls = KernelClass::kOther;
    else
      return bad();
    r.ignore_case = !how.empty() && how[0] == 'i';
    if (r.ignore_case) how.remove_prefix(1);
    if (how == "prefix")
      r.match = Match::kPrefix;
    else if (how == "contains")
      r.match = Match::kContains;
    else if (how == "suffix")
      r.match = Match::kSuffix;
    else
      return bad();
    r.text = std::string(pat);
    added.push_back(std::move(r));
  }
  rules_.insert(rules_.begin(), added.begin(), added.end());
  return OkStatus();
}

KernelClass KernelClassifier::Classify(std::string_view name, EventKind kind) const {
  if (hta_) {
    if (HtaComm(name)) return KernelClass::kComm;
    std::string_view p6 = name.substr(0, 6);
    if (p6 == "Memcpy" || p6 == "Memset" || name.substr(0, 3) == "dma") return KernelClass::kMemory;
    if (name.find("Memcpy") != std::string_view::npos || p6 == "Memset" ||
        name.find("Sync") != std::string_view::npos) {
      return KernelClass::kOther;
    }
    return KernelClass::kCompute;
  }
  for (const Rule& r : rules_) {
    if (Matches(r, name)) return r.cls;
  }
  if (kind == EventKind::kMemcpy || kind == EventKind::kMemset) return KernelClass::kMemory;
  return KernelClass::kCompute;
}

std::string_view KernelClassifier::CommLibrary(std::string_view name) {
  if (ContainsIgnoreCase(name.substr(0, 5), "rccl")) return "rccl";
  if (ContainsIgnoreCase(name.substr(0, 4), "nccl")) return "nccl";
  if (ContainsIgnoreCase(name, "hccl") || name.substr(0, 5) == "hcom_") return "hccl";
  return "custom";
}

}  // namespace vigil::trace
