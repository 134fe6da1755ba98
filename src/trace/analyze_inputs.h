// SPDX-License-Identifier: Apache-2.0
// What `vigil analyze` is given, checked before the (long) reading and analysis: trace files,
// directories of per-rank files and globs expanded to one list of files; whether the traces read
// from them can be one job (a directory or list that mixes traces of different jobs is refused
// unless --independent); and whether the output files can be written at all.
// Owner: trace. Pure functions of the file system and the traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "trace/analysis/kernel_classifier.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct TraceInputs {
  std::vector<std::string> files;  // In the order given; a directory's or glob's sorted by name.
  uint64_t bytes = 0;              // Their total size on disk.
};

// Each input is a trace file, a directory (its *.json and *.json.gz files) or, when no such path
// exists, a glob ("traces/rank-*.json.gz", for when the shell did not expand it). NotFound for an
// input that is none of these, or a directory or glob without trace files. Duplicates once.
StatusOr<TraceInputs> ExpandTraceInputs(const std::vector<std::string>& inputs);

// "" when `ranks` can be the ranks of one job; otherwise why not, naming the files: different
// GPU models or runtimes, different world sizes, the same rank twice, or (two or more ranks) no
// collective that at least two of them ran.
std::string WhyNotOneJob(const std::vector<RankTrace>& ranks, const KernelClassifier& classifier);

// OK when an output can go to `path` ("-" is stdout): it is not a directory and its directory
// exists and may be written to. InvalidArgument saying which part is wrong otherwise.
Status CheckOutputPath(const std::string& path);

}  // namespace vigil::trace
