// SPDX-License-Identifier: Apache-2.0
// What is missing or inconsistent in a trace, as named problems, each with the analyses it
// invalidates, so a report never reads "ok" over a capture whose GPU side is absent, partial or
// out of order. Built from the reader's and linker's DataQuality counters and the links; the
// report writers list the problems in text, JSON ("data_problems") and HTML. Pure function.
// Owner: trace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/model/trace_model.h"

namespace vigil::trace {

struct DataProblem {
  std::string_view id;                    // stable name, e.g. "gpu_activity_not_captured"
  std::string detail;                     // counts and the likely cause, one sentence
  std::vector<std::string_view> affects;  // the analyses whose results it invalidates
};

// The problems of one rank's linked trace, in a fixed order (most severe first); empty when the
// trace is consistent.
std::vector<DataProblem> FindDataProblems(const RankTrace& trace);

// "a, b and c".
std::string JoinAffected(const std::vector<std::string_view>& affects);

}  // namespace vigil::trace
