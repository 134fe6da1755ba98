// SPDX-License-Identifier: Apache-2.0
#include "fleet/profiling_request.h"

#include <utility>

#include "base/time_util.h"

namespace vigil {
namespace {

using nlohmann::json;

json HostsToJson(const std::vector<ProfilingHost>& hosts) {
  json out = json::array();
  for (const ProfilingHost& h : hosts) {
    json j{{"host", h.host},
           {"rpc_address", h.rpc_address},
           {"state", h.state},
           {"expected_files", h.expected_files}};
    if (!h.trace_id.empty()) j["trace_id"] = h.trace_id;
    if (!h.error.empty()) j["error"] = h.error;
    out.push_back(std::move(j));
  }
  return out;
}

json FilesToJson(const std::vector<ProfilingFile>& files) {
  json out = json::array();
  for (const ProfilingFile& f : files) {
    out.push_back(json{{"host", f.host},
                       {"pid", f.pid},
                       {"rank", f.rank},
                       {"trace_id", f.trace_id},
                       {"path", f.path},
                       {"bytes", f.bytes},
                       {"received", FormatTimestamp(f.received_ns)}});
  }
  return out;
}

std::vector<ProfilingHost> HostsFromJson(const std::string& text) {
  std::vector<ProfilingHost> out;
  json j = json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const json& h : j) {
    if (!h.is_object()) continue;
    ProfilingHost p;
    p.host = h.value("host", "");
    p.rpc_address = h.value("rpc_address", "");
    p.state = h.value("state", "");
    p.trace_id = h.value("trace_id", "");
    p.expected_files = h.value("expected_files", int64_t{0});
    p.error = h.value("error", "");
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ProfilingFile> FilesFromJson(const std::string& text) {
  std::vector<ProfilingFile> out;
  json j = json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  for (const json& f : j) {
    if (!f.is_object()) continue;
    ProfilingFile p;
    p.host = f.value("host", "");
    p.pid = f.value("pid", 0);
    p.rank = f.value("rank", -1);
    p.trace_id = f.value("trace_id", "");
    p.path = f.value("path", "");
    p.bytes = f.value("bytes", uint64_t{0});
    p.received_ns = f.value("received_ns", int64_t{0});
    out.push_back(std::move(p));
  }
  return out;
}

json FilesForDb(const std::vector<ProfilingFile>& files) {
  json out = FilesToJson(files);
  for (size_t i = 0; i < files.size(); ++i) out[i]["received_ns"] = files[i].received_ns;
  return out;
}

}  // namespace

int64_t ProfilingRequest::ExpectedFiles() const {
  int64_t n = 0;
  for (const ProfilingHost& h : hosts) n += h.expected_files;
  return n;
}

json ProfilingRequestToJson(const ProfilingRequest& r) {
  json out{{"request_id", r.request_id},
           {"job_id", r.job_id},
           {"reason", r.reason},
           {"trigger", r.trigger},
           {"state", r.state},
           {"duration_ms", r.duration_ms},
           {"iterations", r.iterations},
           {"created", FormatTimestamp(r.created_ns)},
           {"updated", FormatTimestamp(r.updated_ns)},
           {"deadline", FormatTimestamp(r.deadline_ns)},
           {"hosts", HostsToJson(r.hosts)},
           {"expected_files", r.ExpectedFiles()},
           {"files", FilesToJson(r.files)},
           {"analysis_id", r.analysis_id > 0 ? json(r.analysis_id) : json(nullptr)}};
  if (!r.error.empty()) out["error"] = r.error;
  return out;
}

StatusOr<std::vector<ProfilingRequest>> LoadProfilingRequests(Db& db) {
  VIGIL_ASSIGN_OR_RETURN(Stmt st,
                         db.Prepare("SELECT request_id, job_id, reason, trigger, duration_ms,"
                                    " iterations, state, created_ns, updated_ns, deadline_ns,"
                                    " hosts_json, files_json, analysis_id, error, trace_dir"
                                    " FROM profiling_requests"));
  std::vector<ProfilingRequest> out;
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    ProfilingRequest r;
    r.request_id = st.Text(0);
    r.job_id = st.Text(1);
    r.reason = st.Text(2);
    r.trigger = st.Text(3);
    r.duration_ms = st.Int(4);
    r.iterations = st.Int(5);
    r.state = st.Text(6);
    r.created_ns = st.Int(7);
    r.updated_ns = st.Int(8);
    r.deadline_ns = st.Int(9);
    r.hosts = HostsFromJson(st.Text(10));
    r.files = FilesFromJson(st.Text(11));
    r.analysis_id = st.IsNull(12) ? 0 : st.Int(12);
    r.error = st.Text(13);
    r.trace_dir = st.Text(14);
    out.push_back(std::move(r));
  }
  return out;
}

Status SaveProfilingRequest(Db& db, const ProfilingRequest& r) {
  VIGIL_ASSIGN_OR_RETURN(
      Stmt st, db.Prepare("INSERT INTO profiling_requests (request_id, job_id, reason, trigger,"
                          " duration_ms, iterations, state, created_ns, updated_ns, deadline_ns,"
                          " hosts_json, files_json, analysis_id, error, trace_dir) VALUES"
                          " (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,NULLIF(?13,0),?14,?15)"
                          " ON CONFLICT (request_id) DO UPDATE SET state=excluded.state,"
                          " updated_ns=excluded.updated_ns, deadline_ns=excluded.deadline_ns,"
                          " hosts_json=excluded.hosts_json, files_json=excluded.files_json,"
                          " analysis_id=excluded.analysis_id, error=excluded.error"));
  st.Bind(1, r.request_id)
      .Bind(2, r.job_id)
      .Bind(3, r.reason)
      .Bind(4, r.trigger)
      .Bind(5, r.duration_ms)
      .Bind(6, r.iterations)
      .Bind(7, r.state)
      .Bind(8, r.created_ns)
      .Bind(9, r.updated_ns)
      .Bind(10, r.deadline_ns)
      .Bind(11, HostsToJson(r.hosts).dump())
      .Bind(12, FilesForDb(r.files).dump())
      .Bind(13, r.analysis_id)
      .Bind(14, r.error)
      .Bind(15, r.trace_dir);
  VIGIL_RETURN_IF_ERROR(st.Run());
  return OkStatus();
}

}  // namespace vigil
