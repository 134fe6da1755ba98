// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/rms_norm.h"

#include <cmath>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

// How a fused-quantisation variant writes its output: FP8 (one byte per element) with FP32 scales,
// one per row, or one per group of `group_size` (a concrete argument) along the row.
constexpr int kNoQuant = -1;
constexpr int kPerRow = -2;

// Where each operator keeps its activation and its weight, whether it also adds a residual
// (reading it and writing the sum back), and how it quantises its output.
struct RmsOp {
  std::string_view name;
  size_t input = 0;
  size_t weight = 1;
  bool residual_add = false;
  int quant = kNoQuant;  // kNoQuant, kPerRow, or the index of the group_size argument
};

constexpr RmsOp kOps[] = {
    {"aiter::rms_norm", 0, 1, false},                  // (x, weight, eps, ...)
    {"aiter::rmsnorm2d_fwd_ck", 0, 1, false},          // (x, weight, eps, ...)
    {"aiter::rmsnorm", 1, 2, false},                   // (out, x, weight, eps)
    {"aiter::rmsnorm2d_fwd_with_add_ck", 1, 4, true},  // (out, x, res_in, res_out, weight, ...)
    {"aiter::add_rmsnorm", 1, 4, true},                // (out, x, res_in, res_out, weight, eps)
    {"_C::rms_norm", 1, 2, false},                     // vLLM: (out, x, weight, eps)
    {"_C::fused_add_rms_norm", 0, 2, true},            // vLLM: (x, residual, weight, eps), in place
    {"sgl_kernel::rmsnorm", 1, 2, false},              // (out, x, weight, eps, enable_pdl)
    {"sgl_kernel::fused_add_rmsnorm", 0, 2, true},     // (x, residual, weight, eps, enable_pdl)
    // (out, x, yscale, weight, eps, flag): FP8 out, one scale per row.
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck", 1, 3, false, kPerRow},
    // (out, x, scale, weight, eps, group_size, ...).
    {"aiter::rmsnorm_quant", 1, 3, false, 5},
    // (x, weight, eps, group_size) and (x, residual, weight, eps, group_size).
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant", 0, 1, false, 3},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", 0, 2, true, 4},
};

const RmsOp* Find(std::string_view name) {
  for (const RmsOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

bool HandlesRmsNorm(std::string_view op_name) { return Find(op_name) != nullptr; }

std::optional<OpWork> ModelRmsNorm(std::string_view op_name, const OpInputs& inputs) {
  const RmsOp* op = Find(op_name);
  if (op == nullptr) return std::nullopt;
  const std::vector<int64_t>& weight = InputDims(inputs, op->weight);
  if (InputDims(inputs, op->input).empty() || weight.empty() || weight[0] <= 0) {
    return std::nullopt;
  }
  std::string_view dtype = InputType(inputs, op->input);
  std::optional<int> bpe = OperandBytes(dtype);
  if (!bpe) return std::nullopt;
  double elems = double(Numel(InputDims(inputs, op->input)));
  double channels = double(weight[0]);
  OpWork work;
  work.category = "RMSNorm_fwd";
  work.spec = VectorSpec(dtype);
  // Per row: sum of squares and 1/sqrt (2 per element + 2); then scale and weight each element.
  work.flops = elems / channels * (2 * channels + 2) + 2 * elems;
  // Read the activation and the weight, write the output.
  work.bytes = 2 * elems * *bpe + channels * *bpe;
  if (op->quant != kNoQuant) {
    // FP8 output instead, plus its FP32 scales; finding and applying a scale is 2 FLOPs per
    // element. A group size that is not recorded makes one group per row.
    double groups = 1;
    if (op->quant >= 0) {
      std::optional<double> size = ParseNumber(InputConcrete(inputs, size_t(op->quant)));
      if (size && *size > 0) groups = std::ceil(channels / *size);
    }
    work.flops += 2 * elems;
    work.bytes += elems * (1 - *bpe) + elems / channels * groups * 4;
  }
  if (op->residual_add) {
    work.flops += elems;             // x + residual
    work.bytes += 2 * elems * *bpe;  // read the residual, write the sum
  }
  return work;
}

}  // namespace vigil::trace
