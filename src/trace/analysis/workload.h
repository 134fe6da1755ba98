// SPDX-License-Identifier: Apache-2.0
// What the traced program is doing, read from the trace itself, so that the insight rules advise
// only what applies: training or inference (backward ops and autograd, optimizer steps, inference
// engine names such as vLLM and SGLang), how it is parallelised (DDP/FSDP data parallelism or
// tensor parallelism), whether it already launches CUDA/HIP graphs, and what the GPU can do
// (tensor cores, TF32, BF16: from the hwspec table by device name, else the compute capability).
// Pure function of a linked RankTrace. Owner: trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/model/trace_model.h"

namespace vigil::trace {

enum class WorkloadKind : uint8_t { kUnknown, kTraining, kInference };
std::string_view WorkloadKindName(WorkloadKind kind);  // "unknown", "training", "inference"

enum class Parallelism : uint8_t { kNone, kDataParallel, kTensorParallel };
std::string_view ParallelismName(Parallelism p);  // "none", "data_parallel", "tensor_parallel"

// What the GPU supports; `known` is false where neither the model nor a compute capability is in
// the trace, and then every capability reads true (no advice is withheld on a guess).
struct GpuFeatures {
  bool known = false;
  std::string architecture;  // "turing", "ampere", "cdna3", ... or "sm_75" from the capability
  bool tensor_cores = true;  // FP16 matrix units
  bool tf32 = true;          // TF32 tensor cores (NVIDIA Ampere and newer)
  bool bf16 = true;          // BF16 tensor cores (NVIDIA Ampere and newer, AMD CDNA2 and newer)
};

struct Workload {
  WorkloadKind kind = WorkloadKind::kUnknown;
  std::string reason;  // what decided it, e.g. "1236 backward ops, 10 optimizer steps"
  uint64_t backward_ops = 0;
  uint64_t optimizer_ops = 0;
  uint64_t inference_engine_ops = 0;  // vLLM / SGLang / TensorRT-LLM names
  uint64_t cpu_ops = 0;
  Parallelism parallelism = Parallelism::kNone;
  uint64_t graph_launches = 0;    // cudaGraphLaunch / hipGraphLaunch calls
  double graph_kernel_share = 0;  // share of GPU events launched by them, 0-1
  GpuFeatures gpu;
};

Workload DetectWorkload(const RankTrace& trace);
GpuFeatures DetectGpuFeatures(const RankTrace& trace);

}  // namespace vigil::trace
