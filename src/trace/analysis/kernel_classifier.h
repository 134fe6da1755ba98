// SPDX-License-Identifier: Apache-2.0
// Classifies GPU work as computation, communication, memory or other by configurable name
// patterns. The default rules know NCCL's old (ncclKernel_*) and new (ncclDevKernel_*) names,
// RCCL, HCCL and common custom all-reduce kernels; the HTA rules reproduce Holistic Trace
// Analysis exactly (for --hta-compat). Immutable after setup; thread-safe to share.
// Owner: trace.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

enum class KernelClass : uint8_t { kCompute = 0, kComm = 1, kMemory = 2, kOther = 3 };

// "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER" (HTA's names).
std::string_view KernelClassName(KernelClass c);

class KernelClassifier {
 public:
  enum class Match : uint8_t { kPrefix, kContains, kSuffix };
  struct Rule {
    KernelClass cls;
    Match match;
    std::string text;
    bool ignore_case = false;
  };

  static KernelClassifier Default();
  static KernelClassifier HtaCompat();

  // Adds rules (checked before the existing ones), one per line:
  //   <comm|memory|compute|other> <prefix|contains|suffix|iprefix|icontains> <text>
  // '#' starts a comment. Returns InvalidArgument naming the bad line.
  Status AddRules(std::string_view text);

  KernelClass Classify(std::string_view name, EventKind kind) const;
  // "nccl", "rccl", "hccl", "custom" or "" for a communication kernel's library.
  static std::string_view CommLibrary(std::string_view name);

 private:
  bool hta_ = false;
  std::vector<Rule> rules_;
};

// Classify() of a trace's rows, remembered per (name, kind): tens of thousands of kernels share a
// few hundred names, some hundreds of characters long. One per trace and thread.
class RowClassifier {
 public:
  RowClassifier(const KernelClassifier& classifier, const RankTrace& trace)
      : classifier_(classifier), trace_(trace) {}
  KernelClass operator()(uint32_t row) {
    const EventTable& e = trace_.events;
    const uint64_t key = uint64_t{e.name[row]} << 8 | static_cast<uint8_t>(e.kind[row]);
    auto [it, inserted] = memo_.try_emplace(key, KernelClass::kOther);
    if (inserted) it->second = classifier_.Classify(trace_.strings.Get(e.name[row]), e.kind[row]);
    return it->second;
  }

 private:
  const KernelClassifier& classifier_;
  const RankTrace& trace_;
  std::unordered_map<uint64_t, KernelClass> memo_;
};

}  // namespace vigil::trace
