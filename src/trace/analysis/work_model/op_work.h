// SPDX-License-Identifier: Apache-2.0
// The per-operator work model's value types: an operator's recorded inputs (what PyTorch writes
// with record_shapes=True: `Input Dims`, `Input type`, `Input Strides`, `Concrete Inputs`) and the
// work it does (floating-point operations and bytes moved), with the peak it should be held to.
// Why a model at all: a kernel's % of roofline needs the work of the operator that launched it,
// and traces carry shapes, not FLOP counts (with_flops covers only a few operators).
// Owner: trace. Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::trace {

// The token counts of the serving-engine step an operator ran in, from the step's annotation
// (vLLM `execute_<n>_context_<c>(sq..sk..sqsq..sqsk..)_generation_<g>(...)`, SGLang `step[...]`,
// ATOM `prefill[...]` / `decode[...]`; ParseServingStep in inference_attention.h). Paged
// inference attention reads its KV cache through page tables, so its work depends on these
// sums over the batch's requests, not on its tensor shapes: sq = query tokens, sk = KV tokens,
// sqsq = sum of sq^2, sqsk = sum of sq*sk; c_ for context (prefill) requests, g_ for generation
// (decode) requests.
struct ServingStep {
  double c_sq = 0, c_sk = 0, c_sqsq = 0, c_sqsk = 0;  // sums (an estimate can be fractional)
  double g_sq = 0, g_sk = 0, g_sqsq = 0, g_sqsk = 0;
  // False where the annotation has no KV lengths (SGLang `step[DECODE bs=N]`).
  bool kv_known = true;
};

// The routing of a mixture-of-experts layer, which its operator's inputs (hidden states and
// router logits) do not carry: experts per token (the `k` of the TopK operator inside the
// layer) and, from the names of its GEMM kernels (moe.h), the expert-weight dtype ("FP4",
// "FP8" or a recorded dtype) and whether the up projection is gated (`_swiglu`).
struct MoeRouting {
  int topk = 0;
  std::string weight_dtype;
  bool gated = false;
};

// One operator's inputs, position by position (the four lists have one entry per input; an input
// that is not a tensor has empty dims/strides; `concrete` holds the text of a scalar argument, ""
// for tensors).
struct OpInputs {
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types;  // "float", "c10::BFloat16", "c10::Half", "Scalar", "", ...
  std::vector<std::vector<int64_t>> strides;
  std::vector<std::string> concrete;
  // Context beyond the operator's own inputs, set by whoever builds OpInputs from a trace where
  // the trace has it; only the operators that need it read it (docs/work-model.md).
  std::optional<ServingStep> step;  // the enclosing serving step (inference attention)
  std::optional<MoeRouting> moe;    // the layer's routing (MoE expert GEMMs)
};

// The peak an operator's work is held to (TraceLens's `Compute Spec`).
enum class ComputeSpec : uint8_t {
  kMatrixFp64,
  kMatrixFp32,  // TF32 tensor cores where the device has them
  kMatrixTf32,
  kMatrixBf16,
  kMatrixFp16,
  kMatrixFp8,
  kMatrixInt8,
  kMatrixFp4,
  kVectorFp64,
  kVectorFp32,
  kVectorBf16,
  kVectorFp16,
  kUnknown,  // the dtype has no peak in the model (TraceLens leaves the column empty)
};
// "matrix_bf16", "vector_fp32", ...: TraceLens's names ("" for kUnknown).
std::string_view ComputeSpecName(ComputeSpec spec);

struct OpWork {
  std::string_view category;  // TraceLens's category: "GEMM", "CONV_fwd", "SDPA_fwd", ...
  double flops = 0;           // floating-point operations (a multiply-add counts 2)
  double bytes = 0;           // bytes read and written
  ComputeSpec spec = ComputeSpec::kVectorFp32;
};

}  // namespace vigil::trace
