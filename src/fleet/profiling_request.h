// SPDX-License-Identifier: Apache-2.0
// A fleet profiling request as the service keeps it (profiling_service.h): its hosts with their
// states, the files that arrived, the analysis it led to; its JSON form (docs/protocols.md
// "Profiling as a service") and its row in the ledger table profiling_requests (hosts and files
// as JSON text). Owner: fleet. Value types; the Db functions run on the caller's connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "fleet/sqlite_db.h"

namespace vigil {

struct ProfilingFile {
  std::string host;
  int32_t pid = 0;
  int32_t rank = -1;
  std::string trace_id;
  std::string path;
  uint64_t bytes = 0;
  int64_t received_ns = 0;
};

struct ProfilingHost {
  std::string host;
  std::string rpc_address;
  std::string state = "pending";  // pending | tracing | no_processes | failed
  std::string trace_id;
  int64_t expected_files = 0;  // Processes the daemon triggered.
  std::string error;
};

struct ProfilingRequest {
  std::string request_id;
  std::string job_id, reason, trigger;
  int64_t duration_ms = 0, iterations = 0;
  // starting | collecting | analysing | analysed | failed
  std::string state = "starting";
  int64_t created_ns = 0, updated_ns = 0, deadline_ns = 0;
  std::vector<ProfilingHost> hosts;
  std::vector<ProfilingFile> files;
  int64_t analysis_id = 0;  // 0 = none.
  std::string error;
  std::string trace_dir;
  bool Terminal() const { return state == "analysed" || state == "failed"; }
  int64_t ExpectedFiles() const;
};

nlohmann::json ProfilingRequestToJson(const ProfilingRequest& r);

// Every stored request, in no particular order.
StatusOr<std::vector<ProfilingRequest>> LoadProfilingRequests(Db& db);
// Inserts the request or updates its changing columns.
Status SaveProfilingRequest(Db& db, const ProfilingRequest& r);

}  // namespace vigil
