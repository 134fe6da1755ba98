// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/workload.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "hwspec/gpu_specs.h"

namespace vigil::trace {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// Autograd's backward nodes ("autograd::engine::evaluate_function: MmBackward0",
// "ConvolutionBackward0").
bool IsBackwardName(std::string_view n) {
  return StartsWith(n, "autograd::engine::evaluate_function") || Contains(n, "Backward0") ||
         Contains(n, "Backward1") || StartsWith(n, "autograd::");
}

// Optimizer steps as the profiler names them ("Optimizer.step#AdamW.step",
// "Optimizer.zero_grad#SGD.zero_grad") and the fused optimizer kernels' operators.
bool IsOptimizerName(std::string_view n) {
  return StartsWith(n, "Optimizer.step#") || StartsWith(n, "Optimizer.zero_grad#") ||
         n == "## zero_grad ##" || StartsWith(n, "aten::_fused_adam") ||
         StartsWith(n, "aten::_fused_sgd") || Contains(n, "multi_tensor_adam");
}

bool IsInferenceEngineName(std::string_view n) {
  constexpr std::array<std::string_view, 9> kMarks = {"vllm",
                                                      "sglang",
                                                      "tensorrt_llm",
                                                      "paged_attention",
                                                      "execute_model",
                                                      "reshape_and_cache",
                                                      "unified_attention",
                                                      "flash_attn_with_kvcache",
                                                      "ModelRunner"};
  for (std::string_view m : kMarks) {
    if (Contains(n, m)) return true;
  }
  return false;
}

bool IsDataParallelName(std::string_view n) {
  return StartsWith(n, "DistributedDataParallel") || Contains(n, "FullyShardedDataParallel") ||
         StartsWith(n, "FSDP::") || StartsWith(n, "torch::distributed::reducer") ||
         StartsWith(n, "DeepSpeedEngine");
}

bool IsTensorParallelName(std::string_view n) {
  return Contains(n, "tensor_model_parallel") || Contains(n, "custom_all_reduce") ||
         Contains(n, "cross_device_reduce") || Contains(n, "all_reduce_tp") ||
         StartsWith(n, "vllm::all_reduce") || Contains(n, "outplace_all_reduce");
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

}  // namespace

std::string_view WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kTraining:
      return "training";
    case WorkloadKind::kInference:
      return "inference";
    case WorkloadKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view ParallelismName(Parallelism p) {
  switch (p) {
    case Parallelism::kDataParallel:
      return "data_parallel";
    case Parallelism::kTensorParallel:
      return "tensor_parallel";
    case Parallelism::kNone:
      break;
  }
  return "none";
}

GpuFeatures DetectGpuFeatures(const RankTrace& t) {
  GpuFeatures f;
  if (t.meta.devices.empty()) return f;
  const DeviceProps& d = t.meta.devices.front();
  if (const GpuSpec* spec = FindGpuSpec(d.name); spec != nullptr) {
    f.known = true;
    f.architecture = std::string(spec->architecture);
    f.tensor_cores = spec->PeakFlops(GpuPipe::kFp16Tensor) > 0;
    f.tf32 = spec->PeakFlops(GpuPipe::kTf32Tensor) > 0;
    // BF16 runs on the FP16 tensor pipe from NVIDIA Ampere and AMD CDNA2 on.
    const std::string arch = Lower(spec->architecture);
    f.bf16 =
        f.tensor_cores && arch != "volta" && arch != "turing" && arch != "cdna" && arch != "cdna1";
    return f;
  }
  // NVIDIA compute capability: tensor cores from 7.0 (Volta, Turing: FP16 only), TF32 and BF16
  // from 8.0 (Ampere). AMD devices report their own numbering (gfx9: 9.x), so only NVIDIA's is
  // read.
  if (d.compute_major > 0 && t.meta.runtime_family != "hip") {
    f.known = true;
    const int cc = d.compute_major * 10 + std::max(d.compute_minor, 0);
    const char* family = cc >= 100  ? "blackwell"
                         : cc >= 90 ? "hopper"
                         : cc == 89 ? "ada"
                         : cc >= 80 ? "ampere"
                         : cc >= 75 ? "turing"
                         : cc >= 70 ? "volta"
                                    : "pre-volta";
    f.architecture = fmt::format("{} (sm_{})", family, cc);
    f.tensor_cores = d.compute_major >= 7;
    f.tf32 = d.compute_major >= 8;
    f.bf16 = d.compute_major >= 8;
  }
  return f;
}

Workload DetectWorkload(const RankTrace& t) {
  const EventTable& e = t.events;
  Workload w;
  uint64_t dp = 0, tp = 0;
  for (uint32_t i = 0; i < e.size(); ++i) {
    const EventKind k = e.kind[i];
    if (k != EventKind::kCpuOp && k != EventKind::kUserAnnotation &&
        k != EventKind::kPythonFunction) {
      continue;
    }
    const std::string_view n = t.strings.Get(e.name[i]);
    if (k == EventKind::kCpuOp) ++w.cpu_ops;
    if (IsBackwardName(n)) ++w.backward_ops;
    if (IsOptimizerName(n)) ++w.optimizer_ops;
    if (IsInferenceEngineName(n)) ++w.inference_engine_ops;
    if (IsDataParallelName(n)) ++dp;
    if (IsTensorParallelName(n)) ++tp;
  }
  if (w.backward_ops > 0 || w.optimizer_ops > 0) {
    w.kind = WorkloadKind::kTraining;
    w.reason = fmt::format("{} backward ops, {} optimizer ops", w.backward_ops, w.optimizer_ops);
  } else if (w.inference_engine_ops > 0) {
    w.kind = WorkloadKind::kInference;
    w.reason = fmt::format("{} inference-engine ops (vLLM, SGLang, ...), no backward pass",
                           w.inference_engine_ops);
  } else if (w.cpu_ops > 0 && !t.links.gpu.empty()) {
    w.kind = WorkloadKind::kInference;
    w.reason = fmt::format("{} CPU ops and no backward pass or optimizer step", w.cpu_ops);
  } else {
    w.reason = "no CPU operators recorded";
  }
  // Inference over several ranks is tensor parallel in vLLM and SGLang's usual layout.
  const bool inference_ranks = w.kind == WorkloadKind::kInference && t.meta.world_size > 1;
  if ((tp > 0 && (w.kind == WorkloadKind::kInference || dp == 0)) || (inference_ranks && dp == 0)) {
    w.parallelism = Parallelism::kTensorParallel;
  } else if (dp > 0) {
    w.parallelism = Parallelism::kDataParallel;
  }
  w.graph_launches = t.links.graph_launches.size();
  if (!t.links.gpu.empty()) {
    w.graph_kernel_share =
        static_cast<double>(t.links.graph_kernels) / static_cast<double>(t.links.gpu.size());
  }
  w.gpu = DetectGpuFeatures(t);
  return w;
}

}  // namespace vigil::trace
