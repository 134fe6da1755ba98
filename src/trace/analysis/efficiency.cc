// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/efficiency.h"

#include <algorithm>
#include <unordered_map>

#include "hwspec/gpu_specs.h"
#include "trace/analysis/roofline.h"

namespace vigil::trace {
namespace {

bool Has(std::string_view n, std::string_view s) { return n.find(s) != std::string_view::npos; }

// The kernel's own name: before the argument list, without FBGEMM's namespace (its embedding
// kernels are not GEMMs).
std::string Head(std::string_view n) {
  std::string h(n.substr(0, n.find('(')));
  for (size_t p = h.find("fbgemm"); p != std::string::npos; p = h.find("fbgemm")) h.erase(p, 6);
  return h;
}

}  // namespace

bool IsTensorCoreKernel(std::string_view name) {
  const std::string n = Head(name);
  static constexpr std::string_view kPatterns[] = {
      "tensorop",   "884gemm",  "1688gemm",   "16816",
      "h884",       "h1688",    "s1688",      "i8816",
      "hmma",       "wgmma",    "gmma",       "xmma",
      "nvjet",      "_tc_",     "TensorCore", "tensor_core",
      "flash",      "fmha",     "mma_",       "Mma",
      "sm80_",      "sm90_",    "sm100_",     "cutlass_80",
      "cutlass_90", "_MI16x16", "_MI32x32",   "_MI4x4",
      "mfma",       "MFMA",     "ck::",       "triton_tem_fused"};
  for (std::string_view p : kPatterns) {
    if (Has(n, p)) return true;
  }
  return false;
}

bool IsGemmKernel(std::string_view name) {
  const std::string n = Head(name);
  static constexpr std::string_view kPatterns[] = {
      "gemm",   "Gemm",   "GEMM",     "Cijk_",         "cutlass",
      "cublas", "matmul", "Matmul",   "nvjet",         "xmma",
      "wgmma",  "cudnn",  "convolve", "conv2d",        "Conv2d",
      "fprop",  "dgrad",  "wgrad",    "implicit_gemm", "triton_tem_fused_mm"};
  for (std::string_view p : kPatterns) {
    if (Has(n, p)) return true;
  }
  return false;
}

Efficiency AnalyzeEfficiency(const RankTrace& t, const GpuView& v) {
  Efficiency out;
  const EventTable& e = t.events;
  int32_t num_sms = -1;
  std::string device_name;
  for (const DeviceProps& p : t.meta.devices) {
    if (!p.name.empty()) {
      device_name = p.name;
      num_sms = p.num_sms;
      break;
    }
  }
  double w_sm = 0, w_occ = 0, sm_time = 0, occ_time = 0;
  std::unordered_map<uint32_t, int64_t> no_tc;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v.is_kernel[i] || v.cls[i] != KernelClass::kCompute) continue;
    out.compute_time += v.dur[i];
    std::string_view name = t.strings.Get(v.name_of(i));
    bool tc = IsTensorCoreKernel(name);
    if (tc) out.tensor_core_time += v.dur[i];
    if (IsGemmKernel(name)) {
      out.gemm_time += v.dur[i];
      if (!tc) no_tc[v.name_of(i)] += v.dur[i];
    }
    uint32_t ka = e.kargs[v.row[i]];
    if (ka == kNoIndex) continue;
    const KernelArgs& k = t.kernel_args[ka];
    double d = static_cast<double>(v.dur[i]);
    double blocks_per_sm = k.blocks_per_sm;
    if (blocks_per_sm < 0 && num_sms > 0 && k.grid[0] > 0) {
      blocks_per_sm = static_cast<double>(k.grid[0]) * std::max(1, k.grid[1]) *
                      std::max(1, k.grid[2]) / num_sms;
    }
    if (blocks_per_sm >= 0) {
      w_sm += std::min(1.0, blocks_per_sm) * d;
      sm_time += d;
    }
    if (k.occupancy_pct >= 0) {
      w_occ += k.occupancy_pct * d;
      occ_time += d;
    }
  }
  if (sm_time > 0) out.sm_efficiency_pct = 100.0 * w_sm / sm_time;
  if (occ_time > 0) out.occupancy_pct = w_occ / occ_time;
  for (auto& [name, ns] : no_tc) {
    out.gemm_no_tc_time += ns;
    if (out.top_gemm_no_tc == kNoIndex || ns > no_tc[out.top_gemm_no_tc]) out.top_gemm_no_tc = name;
  }
  double flops = 0;
  bool any = false;
  for (const OpArgs& o : t.op_args) {
    if (o.flops > 0) {
      flops += o.flops;
      any = true;
    }
  }
  if (any) {
    out.total_flops = flops;
    double secs = static_cast<double>(out.compute_time * v.unit_ns) / 1e9;
    if (secs > 0) out.achieved_flops_per_s = flops / secs;
  }
  if (const GpuSpec* spec = FindGpuSpec(device_name); spec != nullptr) {
    out.gpu_model = std::string(spec->model);
  }
  return out;
}

void SetRooflinePct(const Roofline& r, Efficiency* e) {
  if (!r.computed || r.rank.modelled_kernels == 0) return;
  if (r.main_peak_flops_per_s > 0) e->peak_flops_per_s = r.main_peak_flops_per_s;
  e->roofline_pct = r.rank.PctOfReplayed();
}

}  // namespace vigil::trace
