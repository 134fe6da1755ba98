// SPDX-License-Identifier: Apache-2.0
#include "trace/testing/hta_reference.h"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace vigil::trace::testing {
namespace {

using nlohmann::json;

double Num(const json& j) { return j.is_number() ? j.get<double>() : NAN; }

void Check(HtaComparison* c, const std::string& what, double ours, double ref, double scale) {
  ++c->compared;
  double tol = std::max(0.005 * std::fabs(scale), 1e-9);
  if (std::isnan(ref) && std::isnan(ours)) return;
  if (std::fabs(ours - ref) > tol) {
    c->mismatches.push_back(fmt::format("{}: ours={} hta={} (tol {:.3f})", what, ours, ref, tol));
  }
}

bool IsError(const json& j) { return j.is_object() && j.contains("error"); }

}  // namespace

HtaComparison CompareWithHta(const RankReport& r, const std::string& path) {
  HtaComparison c;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  json ref = json::parse(ss.str(), nullptr, false);
  if (ref.is_discarded()) return c;
  c.loaded = true;
  const StringTable& strings = r.trace->strings;
  for (const char* key : {"temporal_breakdown", "kernel_breakdown", "comm_comp_overlap",
                          "idle_time_breakdown", "cuda_kernel_launch_stats"}) {
    if (ref.contains(key) && IsError(ref[key])) {
      c.hta_errors.push_back(std::string(key) + ": " + ref[key]["error"].get<std::string>());
    }
  }
  const TemporalBreakdown& tb = r.temporal;
  double span = static_cast<double>(tb.kernel_time);
  if (ref.contains("temporal_breakdown") && ref["temporal_breakdown"].is_array() &&
      !ref["temporal_breakdown"].empty()) {
    const json& t = ref["temporal_breakdown"][0];
    double ref_span = Num(t["kernel_time(us)"]);
    Check(&c, "kernel_time", span, ref_span, ref_span);
    Check(&c, "idle_time", static_cast<double>(tb.idle), Num(t["idle_time(us)"]), ref_span);
    Check(&c, "compute_time", static_cast<double>(tb.compute), Num(t["compute_time(us)"]),
          ref_span);
    Check(&c, "non_compute_time", static_cast<double>(tb.non_compute),
          Num(t["non_compute_time(us)"]), ref_span);
  }
  if (ref.contains("kernel_breakdown") && ref["kernel_breakdown"].is_object()) {
    const json& kb = ref["kernel_breakdown"];
    double total = 0;
    for (const json& row : kb["kernel_type"]) total += Num(row["sum"]);
    for (const json& row : kb["kernel_type"]) {
      std::string type = row["kernel_type"].get<std::string>();
      double ours = 0;
      for (const KernelTypeTime& t : r.kernels.types) {
        if (t.type == type) ours = static_cast<double>(t.sum);
      }
      Check(&c, "kernel_type " + type, ours, Num(row["sum"]), total);
    }
    std::map<std::pair<std::string, std::string>, double> class_total;
    for (const json& row : kb["top_kernels"]) {
      class_total[{row["kernel_type"].get<std::string>(), ""}] += Num(row["sum (us)"]);
    }
    for (const json& row : kb["top_kernels"]) {
      std::string type = row["kernel_type"].get<std::string>();
      std::string name = row["name"].get<std::string>();
      double ours = NAN;
      for (const TopKernel& k : r.kernels.top) {
        if (k.name == name && KernelClassName(k.cls) == type) ours = k.sum;
      }
      Check(&c, "top_kernel " + type + " " + name.substr(0, 60), ours, Num(row["sum (us)"]),
            class_total[{type, ""}]);
    }
  }
  if (ref.contains("comm_comp_overlap") && ref["comm_comp_overlap"].is_array() &&
      !ref["comm_comp_overlap"].empty()) {
    const json& v = ref["comm_comp_overlap"][0]["comp_comm_overlap_pctg"];
    double ours = r.overlap.has_comm ? r.overlap.pct : NAN;
    if (v.is_null()) {
      Check(&c, "comm_comp_overlap (null)", r.overlap.has_comm ? 1.0 : 0.0, 0.0, 1.0);
    } else {
      Check(&c, "comm_comp_overlap_pct", ours, Num(v), 100.0);
    }
  }
  if (ref.contains("idle_time_breakdown") && ref["idle_time_breakdown"].is_object()) {
    std::map<int64_t, double> stream_total;
    for (const json& row : ref["idle_time_breakdown"]["by_category"]) {
      stream_total[row["stream"].get<int64_t>()] += Num(row["idle_time"]);
    }
    for (const json& row : ref["idle_time_breakdown"]["by_category"]) {
      int64_t stream = row["stream"].get<int64_t>();
      std::string cat = row["idle_category"].get<std::string>();
      double ours = 0;
      for (const StreamIdle& s : r.idle.streams) {
        if (s.stream != stream) continue;
        if (cat == "host_wait") ours = static_cast<double>(s.host_wait.time);
        if (cat == "kernel_wait") ours = static_cast<double>(s.kernel_wait.time);
        if (cat == "other") ours = static_cast<double>(s.other.time);
      }
      Check(&c, fmt::format("idle stream {} {}", stream, cat), ours, Num(row["idle_time"]),
            std::max(stream_total[stream], span * 0.0));
    }
  }
  if (ref.contains("cuda_kernel_launch_stats") && ref["cuda_kernel_launch_stats"].is_object() &&
      !IsError(ref["cuda_kernel_launch_stats"])) {
    const json& l = ref["cuda_kernel_launch_stats"];
    double n = Num(l["n"]);
    const LaunchStats& s = r.launch;
    Check(&c, "launch n", static_cast<double>(s.n), n, n);
    Check(&c, "launch short", static_cast<double>(s.short_kernels),
          Num(l["short_gpu_kernels(cpu<=50us & gpu<cpu)"]), n);
    Check(&c, "launch runtime_outliers", static_cast<double>(s.runtime_outliers),
          Num(l["runtime_outliers(cpu>50us)"]), n);
    Check(&c, "launch delay_outliers", static_cast<double>(s.delay_outliers),
          Num(l["launch_delay_outliers(>100us)"]), n);
  }
  return c;
}

}  // namespace vigil::trace::testing
