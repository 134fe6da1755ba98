// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/moe.h"

#include <cctype>
#include <cmath>

#include "trace/analysis/work_model/gemm.h"

namespace vigil::trace {
namespace {

enum class Stage : uint8_t { kUp, kDown, kBoth };

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
