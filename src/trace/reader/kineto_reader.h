// SPDX-License-Identifier: Apache-2.0
// Reads Kineto traces (.json or .json.gz, every PyTorch era) into RankTrace models without ever
// holding the whole document: the decompressed text passes through a bounded window, event by
// event. A directory is read as one file per rank, files in parallel. A cut-off file is not an
// error: what was read is kept and DataQuality says where it stopped.
// Owner: trace. Thread-safe (no shared state between calls).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

struct ReadOptions {
  // Advanced by the file bytes consumed (for a progress bar); may be shared by several reads.
  std::atomic<uint64_t>* progress_bytes = nullptr;
  // Size of the text window; events larger than this grow it.
  size_t window_bytes = 1 << 20;
  // Inflate .gz on a second thread while parsing (overlaps the two; <1 MB more memory).
  bool background_inflate = true;
  // python_function events (with_stack) are most of the events of many traces and no analysis
  // uses them; they are counted in DataQuality but not stored unless this is set (`nn.Module: X`
  // frames are stored either way: the operator breakdown attributes work to modules).
  bool keep_python_functions = false;
  // Flow endpoints ("ph": "s"/"f") are a tenth of a trace's rows and no analysis reads them
  // (launches link to GPU work by correlation id); counted in DataQuality, stored if this is set.
  bool keep_flows = false;
  // Threads for a directory of ranks (0: hardware concurrency).
  int threads = 0;
};

StatusOr<RankTrace> ReadTraceFile(const std::string& path, const ReadOptions& options = {});

// A file, or a directory whose *.json / *.json.gz files are the ranks. Ranks come from
// distributedInfo, else the file name (rank-N, rank_N, _rankN), else their order.
// Sorted by rank.
StatusOr<std::vector<RankTrace>> ReadTraces(const std::string& path,
                                            const ReadOptions& options = {});

// The same for a list of files, read in parallel; ranks without one take their list position.
StatusOr<std::vector<RankTrace>> ReadTraceFiles(const std::vector<std::string>& files,
                                                const ReadOptions& options = {});

// Trace files of a directory, sorted by name; the total size in *bytes when non-null.
StatusOr<std::vector<std::string>> ListTraceFiles(const std::string& dir, uint64_t* bytes);

// "rank-3.json.gz" -> 3; -1 when the name carries no rank.
int RankFromFileName(std::string_view file_name);

}  // namespace vigil::trace
