// SPDX-License-Identifier: Apache-2.0
// `vigil analyze --perfetto OUT --merge-snoop FILE`: the events of another Chrome trace (what
// `vigil snoop --chrome-trace` writes: CUDA calls traced with eBPF, one process per traced pid)
// appended to the Perfetto output, so they show as their own process tracks beside the Kineto
// events. The snoop file's `ts` are microseconds since the Unix epoch; the Perfetto output is on
// the Kineto trace's clock, which is Unix time minus `baseTimeNanoseconds` (zero in traces that
// have none), so every `ts` is shifted by that base, exactly (parsed from its text, not through
// a double). Other fields are copied as written. Pure functions; thread-safe.
// Owner: trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil::trace {

// Appends the events of `extra` ({"traceEvents": [...]} or a bare array of events) to
// `perfetto_json` (a document whose last characters close its traceEvents array and the object,
// as RenderPerfettoTrace writes it), subtracting `shift_ns` from each `ts`. Returns the number of
// events appended. InvalidArgument when `extra` is not such a trace (the document is unchanged).
StatusOr<size_t> AppendChromeTraceEvents(std::string_view extra, int64_t shift_ns,
                                         std::string* perfetto_json);

// Reads `path` (.json or .json.gz, at most 4 GiB uncompressed) and appends it as above.
StatusOr<size_t> MergeChromeTraceFile(const std::string& path, int64_t shift_ns,
                                      std::string* perfetto_json);

}  // namespace vigil::trace
