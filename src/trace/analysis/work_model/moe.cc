// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/moe.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "trace/analysis/work_model/gemm.h"

namespace vigil::trace {
namespace {

enum class Stage : uint8_t { kUp, kDown, kBoth, kFused };

struct MoeOp {
  std::string_view name;
  Stage stage = Stage::kBoth;
};

// TraceLens splits vllm::moe_forward into one pseudo operator per expert GEMM kernel; both
// spellings of its names are accepted. moe_forward itself is the whole layer.
constexpr MoeOp kOps[] = {
    {"vllm::moe_forward", Stage::kBoth},
    {"pseudo_op::moe_triton_unfused_up", Stage::kUp},
    {"pseudo_op::moe_triton_unfused_down", Stage::kDown},
    {"pseudo_op::unfused_triton_moe_up", Stage::kUp},
    {"pseudo_op::unfused_triton_moe_down", Stage::kDown},
    // AITER's fused MoE (out, input, w1, w2, ...): the routing is in its inputs
    {"aiter::fmoe_g1u1", Stage::kFused},
    {"aiter::fmoe_fp8_blockscale_g1u1", Stage::kFused},
};

const MoeOp* Find(std::string_view name) {
  for (const MoeOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

bool ContainsLower(std::string_view text, std::string_view needle) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find(needle) != std::string::npos;
}

struct Layer {
  double m = 0, k = 0, n = 0, e = 0, topk = 0;  // tokens, hidden, expert width, experts, top-k
  double in_bpe = 0, w_bpe = 0;
  double active = 0;  // experts expected to receive a token
};

// Up: x [M, K] read, (gate and) up weights of the active experts read, [M * topk, N] written.
void Up(const Layer& l, bool gated, double* flops, double* bytes) {
  double g = gated ? 2 : 1;
  *flops += 2 * l.m * l.k * l.n * l.topk * g;
  *bytes +=
      l.m * l.k * l.in_bpe + l.active * g * l.k * l.n * l.w_bpe + l.m * l.n * l.topk * l.in_bpe;
}

// Down: [M * topk, N] read, down weights of the active experts read, [M, K] written.
void Down(const Layer& l, double* flops, double* bytes) {
  *flops += 2 * l.m * l.n * l.k * l.topk;
  *bytes += l.m * l.n * l.topk * l.in_bpe + l.active * l.n * l.k * l.w_bpe + l.m * l.k * l.in_bpe;
}

// aiter::fmoe_g1u1(out [M, K], input [M, K], w1 [E, N*(1+gated), K'], w2 [E, K, N'], ...,
// topk at concrete input 8): both projections and the weighted sum of the top-k outputs in one
// kernel, reading the input and the active experts' weights and writing the output once.
// Packed INT4 weights store K' = K/2 (N' = N/2): N is scaled back by K/K'.
std::optional<OpWork> Fused(const OpInputs& in) {
  if (in.dims.size() < 4 || in.types.size() < 4 || in.concrete.size() < 9) return std::nullopt;
  const auto& out = in.dims[0];
  const auto& w1 = in.dims[2];
  const auto& w2 = in.dims[3];
  if (out.size() != 2 || w1.size() != 3 || w2.size() != 3 || w1[2] <= 0) return std::nullopt;
  int topk = std::atoi(in.concrete[8].c_str());
  Layer l;
  l.m = static_cast<double>(out[0]);
  l.k = static_cast<double>(w2[1]);
  l.n = static_cast<double>(w2[2] * (w2[1] / w1[2]));
  l.e = static_cast<double>(w1[0]);
  l.topk = topk;
  bool gated = static_cast<double>(w1[1]) == 2 * l.n;
  double out_bpe = MatrixBytesPerElement(in.types[0]);
  l.in_bpe = MatrixBytesPerElement(in.types[1]);
  l.w_bpe = MatrixBytesPerElement(in.types[2]);
  if (topk <= 0 || l.e < topk || out_bpe <= 0 || l.in_bpe <= 0 || l.w_bpe <= 0) {
    return std::nullopt;
  }
  l.active = l.e * (1 - std::pow((l.e - l.topk) / l.e, l.m));
  double g = gated ? 2 : 1;
  double flops = 2 * l.m * l.k * l.n * l.topk * g + 2 * l.m * l.k * l.n * l.topk +
                 l.m * l.k * (2 * l.topk - 1);
  double bytes =
      l.m * l.k * l.in_bpe + l.active * (g + 1) * l.n * l.k * l.w_bpe + l.m * l.k * out_bpe;
  return OpWork{"MoE_fused_fwd", flops, bytes, MatrixSpecForDtype(in.types[1])};
}

}  // namespace

bool IsMoeGemmKernel(std::string_view kernel_name) {
  return ContainsLower(kernel_name, "matmul_ogs");
}

std::string MoeWeightDtypeFromKernel(std::string_view kernel_name) {
  if (ContainsLower(kernel_name, "fp4")) return "FP4";  // also "mxfp4"
  if (ContainsLower(kernel_name, "fp8") || ContainsLower(kernel_name, "e4m3")) return "FP8";
  return "";
}

bool MoeKernelIsGated(std::string_view kernel_name) {
  return ContainsLower(kernel_name, "_swiglu");
}

bool HandlesMoe(std::string_view op_name) { return Find(op_name) != nullptr; }

std::optional<OpWork> ModelMoe(std::string_view op_name, const OpInputs& in) {
  const MoeOp* op = Find(op_name);
  if (op != nullptr && op->stage == Stage::kFused) return Fused(in);
  if (op == nullptr || !in.moe.has_value() || in.moe->topk <= 0) return std::nullopt;
  if (in.dims.size() < 2 || in.dims[0].size() != 2 || in.dims[1].size() != 2 || in.types.empty()) {
    return std::nullopt;
  }
  Layer l;
  l.m = static_cast<double>(in.dims[0][0]);
  l.k = static_cast<double>(in.dims[0][1]);
  l.n = l.k;  // the expert width is not recorded (see the header)
  l.e = static_cast<double>(in.dims[1][1]);
  l.topk = in.moe->topk;
  l.in_bpe = MatrixBytesPerElement(in.types[0]);
  l.w_bpe = MatrixBytesPerElement(in.moe->weight_dtype);
  if (l.in_bpe <= 0 || l.w_bpe <= 0 || l.e <= 0 || l.topk > l.e) return std::nullopt;
  l.active = l.e * (1 - std::pow((l.e - l.topk) / l.e, l.m));
  double flops = 0, bytes = 0;
  if (op->stage != Stage::kDown) Up(l, in.moe->gated, &flops, &bytes);
  if (op->stage != Stage::kUp) Down(l, &flops, &bytes);
  return OpWork{"MoE_unfused_fwd", flops, bytes, MatrixSpecForDtype(in.moe->weight_dtype)};
}

}  // namespace vigil::trace
