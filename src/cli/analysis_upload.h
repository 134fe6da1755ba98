// SPDX-License-Identifier: Apache-2.0
// `vigil analyze TRACE --upload URL [--job-id J] [--token-file F] [--reason R]`: after the
// analysis, sends the JSON report to vigil-fleet's POST /api/v1/analyses (docs/protocols.md
// "Analysis upload"), so the job's page and the fleet's Workflows page show it. The job id comes
// from --job-id, else from the trace's own metadata ("job_id" near the top of the file, as
// PyTorch's profiler writes extra metadata); without either the upload is refused before any
// analysis runs. With --independent each file's report is uploaded on its own, to the job in
// that file's metadata (--job-id is refused: it names one job). The token file is
// --fleet-token-file, else the global --token-file (its first line "HOST TOKEN" or just
// "TOKEN"). Owner: cli. Single-threaded.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"
#include "trace/analyze_main.h"

namespace vigil {

struct AnalysisUploadFlags {
  std::string url;         // --upload: http://HOST:PORT of vigil-fleet ("" = no upload).
  std::string job_id;      // --job-id
  std::string reason;      // --reason
  std::string token_file;  // --fleet-token-file (else the global --token-file)
};

// Registers --upload, --job-id, --reason and --fleet-token-file on `vigil analyze`.
void AddAnalysisUploadFlags(CLI::App* cmd, AnalysisUploadFlags* flags);

// The job id in the first MiB of the trace (or of the first trace file of a directory), if any.
std::string JobIdFromTrace(const std::string& input);

// Runs the analysis (trace::RunAnalyze) and, with --upload, uploads its JSON report. Returns the
// exit code: 0 ok, 1 failed (analysis or upload), 2 usage, 3 vigil-fleet unreachable.
int AnalyzeAndUpload(CliContext& ctx, trace::AnalyzeOptions options,
                     const AnalysisUploadFlags& flags, FILE* out, FILE* err);

}  // namespace vigil
