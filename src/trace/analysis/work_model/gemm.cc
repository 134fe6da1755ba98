// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/gemm.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "trace/analysis/work_model/dtypes.h"

namespace vigil::trace {
namespace {

using Dims = std::vector<int64_t>;

enum class Layout : uint8_t {
  kMm,         // (A[M, K], B[K, N])
  kAddmm,      // (C, A[M, K], B[K, N]): bias
  kScaledMm,   // (A[M, K], B[K, N], scales..., bias?): FP8 operands
  kBmm,        // (A[B, M, K], B[B, K, N])
  kBaddbmm,    // (C, A[B, M, K], B[B, K, N]): bias
  kMatmul,     // torch.matmul broadcasting
  kLinear,     // (x[..., K], w[N, K], bias[N]?)
  kXw,         // (x[M, K], w[N, K], ...): serving stacks' GEMM operators
  kGroupedMm,  // (A, B, offs): a group of GEMMs with their sizes in offs
};

// Where a kXw operator's output dtype comes from (what each vendor operator records).
enum class Out : uint8_t {
  kA,          // the activation's dtype (AITER gemm_a16w16: input 3 is a dtype scalar)
  kBiasOrB,    // the bias's dtype with a bias, else the weight's (vLLM rocm_unquantized_gemm)
  kBf16,       // BF16 (the block-scaled FP8/INT8 GEMMs, whose output is not an input)
  kInput3,     // input 3 when it is a tensor (the output y), else BF16
  kInput2OrA,  // input 2 when it is a tensor (the output y), else the activation's dtype
};

struct GemmOp {
  std::string_view name;
  Layout layout = Layout::kMm;
  Out out = Out::kA;
  bool bias_input = false;  // kXw: input 2 is an optional bias[N]
};

constexpr GemmOp kOps[] = {
    {"aten::mm", Layout::kMm},
    {"aten::addmm", Layout::kAddmm},
    {"aten::_scaled_mm", Layout::kScaledMm},
    {"trtllm::cublas_scaled_mm", Layout::kScaledMm},
    {"aten::bmm", Layout::kBmm},
    {"aten::baddbmm", Layout::kBaddbmm},
    {"aten::matmul", Layout::kMatmul},
    {"aten::linear", Layout::kLinear},
    {"aten::_grouped_mm", Layout::kGroupedMm},
    {"vllm::rocm_unquantized_gemm", Layout::kXw, Out::kBiasOrB, true},
    {"aiter::gemm_a16w16", Layout::kXw, Out::kA, true},
    {"aiter::gemm_a16w16_atomic_", Layout::kXw, Out::kInput3},
    {"sglang_profiler::gemm_kernels_flydsl_hgemm", Layout::kXw, Out::kInput3},
    {"aiter::_gemm_a16w16_asm", Layout::kXw, Out::kInput2OrA},
    {"aiter::gemm_a8w8_ck", Layout::kXw, Out::kBf16},
    {"aiter::gemm_a8w8_bpreshuffle", Layout::kXw, Out::kBf16},
    {"aiter::gemm_a8w8_bpreshuffle_ck", Layout::kXw, Out::kBf16},
    {"aiter::gemm_a8w8_blockscale_ck", Layout::kXw, Out::kBf16},
    {"aiter::gemm_a8w8_blockscale_cktile", Layout::kXw, Out::kBf16},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_ck", Layout::kXw, Out::kBf16},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_cktile", Layout::kXw, Out::kBf16},
    {"aiter::_gemm_a8w8_blockscale_bpreshuffle_asm", Layout::kXw, Out::kBf16},
    {"aiter::flatmm_a8w8_blockscale_asm", Layout::kXw, Out::kBf16},
    {"aiter::gfx950_a8w8_blockscale_asm", Layout::kXw, Out::kBf16},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale", Layout::kXw, Out::kBf16},
    {"vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm", Layout::kXw, Out::kBf16},
    {"sglang_profiler::fp8_utils_gemm_a8w8_blockscale", Layout::kXw, Out::kBf16},
    {"sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale", Layout::kXw, Out::kBf16},
};

const GemmOp* Find(std::string_view name) {
  for (const GemmOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

const Dims* DimsAt(const OpInputs& in, size_t i) {
  return i < in.dims.size() ? &in.dims[i] : nullptr;
}

std::string_view TypeAt(const OpInputs& in, size_t i) {
  return i < in.types.size() ? std::string_view(in.types[i]) : std::string_view();
}

bool IsTensorType(std::string_view t) { return BytesPerElement(t) > 0; }

// All operands in the dtype of one input (TraceLens's convention for the aten GEMMs).
std::optional<OpWork> Uniform(int64_t b, int64_t m, int64_t n, int64_t k, bool bias,
                              std::string_view dtype) {
  double bpe = MatrixBytesPerElement(dtype);
  if (bpe <= 0) return std::nullopt;
  return GemmWork(b, m, n, k, bias, bpe, bpe, bpe, bpe, MatrixSpecForDtype(dtype));
}

// torch.matmul: 1-D operands gain a unit dimension, batch dimensions broadcast.
std::optional<OpWork> Matmul(const Dims& a, const Dims& b, std::string_view dtype) {
  if (a.empty() || b.empty()) return std::nullopt;
  Dims x = a.size() == 1 ? Dims{1, a[0]} : a;
  Dims y = b.size() == 1 ? Dims{b[0], 1} : b;
  int64_t m = x[x.size() - 2], k = x.back(), n = y.back();
  if (y[y.size() - 2] != k) return std::nullopt;
  size_t bx = x.size() - 2, by = y.size() - 2, nb = std::max(bx, by);
  int64_t batch = 1;
  for (size_t i = 0; i < nb; ++i) {
    int64_t dx = i < nb - bx ? 1 : x[i - (nb - bx)];
    int64_t dy = i < nb - by ? 1 : y[i - (nb - by)];
    batch *= std::max(dx, dy);
  }
  return Uniform(batch, m, n, k, false, dtype);
}

// _scaled_mm's bias is a 1-D tensor of N elements; its scales are 0-d or 2-D. The argument
// order moved between PyTorch releases (bias third before 2.4, fifth after), so look for it.
bool ScaledMmHasBias(const OpInputs& in, int64_t n) {
  for (size_t i = 2; i < in.dims.size(); ++i) {
    if (in.dims[i].size() == 1 && in.dims[i][0] == n && IsTensorType(TypeAt(in, i))) return true;
  }
  return false;
}

std::optional<OpWork> GroupedMm(const OpInputs& in) {
  const Dims* a = DimsAt(in, 0);
  const Dims* b = DimsAt(in, 1);
  if (a == nullptr || b == nullptr) return std::nullopt;
  std::string_view dtype = TypeAt(in, 0);
  double bpe = MatrixBytesPerElement(dtype);
  if (bpe <= 0) return std::nullopt;
  ComputeSpec spec = MatrixSpecForDtype(dtype);
  if (a->size() == 3 && b->size() == 3) {  // [G, M, K] x [G, K, N]
    return GemmWork((*a)[0], (*a)[1], (*b)[2], (*a)[2], false, bpe, bpe, bpe, bpe, spec);
  }
  if (a->size() == 2 && b->size() == 3) {  // tokens [T, K] routed over experts [G, K, N]
    int64_t t = (*a)[0], k = (*a)[1], g = (*b)[0], n = (*b)[2];
    OpWork w = GemmWork(1, t, n, k, false, bpe, 0, bpe, bpe, spec);
    w.bytes += static_cast<double>(g) * k * n * bpe;
    return w;
  }
  const Dims* offs = DimsAt(in, 2);
  if (a->size() == 2 && b->size() == 2 && offs != nullptr && offs->size() == 1) {
    // K split into groups (a weight gradient): G outputs of [M, N].
    int64_t m = (*a)[0], k = (*a)[1], n = (*b)[1], g = (*offs)[0];
    OpWork w = GemmWork(1, m, n, k, false, bpe, bpe, bpe, 0, spec);
    w.bytes += static_cast<double>(g) * m * n * bpe;
    return w;
  }
  return std::nullopt;
}

std::optional<OpWork> Xw(const GemmOp& op, const OpInputs& in) {
  const Dims* x = DimsAt(in, 0);
  const Dims* w = DimsAt(in, 1);
  if (x == nullptr || w == nullptr || x->size() != 2 || w->size() != 2) return std::nullopt;
  int64_t m = (*x)[0], k = (*x)[1], n = (*w)[0];
  const Dims* bias_dims = DimsAt(in, 2);
  bool bias = op.bias_input && bias_dims != nullptr && !bias_dims->empty();
  std::string_view out;
  switch (op.out) {
    case Out::kA:
      out = TypeAt(in, 0);
      break;
    case Out::kBiasOrB:
      out = bias ? TypeAt(in, 2) : TypeAt(in, 1);
      break;
    case Out::kBf16:
      out = "c10::BFloat16";
      break;
    case Out::kInput3:
      out = IsTensorType(TypeAt(in, 3)) ? TypeAt(in, 3) : "c10::BFloat16";
      break;
    case Out::kInput2OrA:
      out = IsTensorType(TypeAt(in, 2)) ? TypeAt(in, 2) : TypeAt(in, 0);
      break;
  }
  double a = MatrixBytesPerElement(TypeAt(in, 0)), b = MatrixBytesPerElement(TypeAt(in, 1));
  double o = MatrixBytesPerElement(out);
  if (a <= 0 || b <= 0 || o <= 0) return std::nullopt;
  return GemmWork(1, m, n, k, bias, a, b, o, o, MatrixSpecForDtype(TypeAt(in, 0)));
}

}  // namespace

ComputeSpec MatrixSpecForDtype(std::string_view dtype) {
  static constexpr std::pair<std::string_view, ComputeSpec> kSpecs[] = {
      {"double", ComputeSpec::kMatrixFp64},
      {"float", ComputeSpec::kMatrixFp32},
      {"c10::BFloat16", ComputeSpec::kMatrixBf16},
      {"c10::Half", ComputeSpec::kMatrixFp16},
      {"c10::Float8_e4m3fn", ComputeSpec::kMatrixFp8},
      {"c10::Float8_e4m3fnuz", ComputeSpec::kMatrixFp8},
      {"c10::Float8_e5m2", ComputeSpec::kMatrixFp8},
      {"c10::Float8_e5m2fnuz", ComputeSpec::kMatrixFp8},
      {"unsigned char", ComputeSpec::kMatrixFp8},  // FP8 stored as bytes (AITER, TraceLens)
      {"FP8", ComputeSpec::kMatrixFp8},
      {"signed char", ComputeSpec::kMatrixInt8},
      {"c10::Float4_e2m1fn_x2", ComputeSpec::kMatrixFp4},
      {"FP4", ComputeSpec::kMatrixFp4},
  };
  for (const auto& [name, spec] : kSpecs) {
    if (name == dtype) return spec;
  }
  return ComputeSpec::kUnknown;
}

double MatrixBytesPerElement(std::string_view dtype) {
  if (dtype == "FP4") return 0.5;
  if (dtype == "FP8") return 1;
  return BytesPerElement(dtype);
}

OpWork GemmWork(int64_t b, int64_t m, int64_t n, int64_t k, bool bias, double bpe_a, double bpe_b,
                double bpe_bias, double bpe_out, ComputeSpec spec) {
  double mn = static_cast<double>(m) * n;
  double flops = 2.0 * mn * k + (bias ? mn : 0);
  double bytes = static_cast<double>(m) * k * bpe_a + static_cast<double>(k) * n * bpe_b +
                 mn * bpe_out + (bias ? n * bpe_bias : 0);
  return OpWork{"GEMM", b * flops, b * bytes, spec};
}

bool HandlesGemm(std::string_view op_name) { return Find(op_name) != nullptr; }

std::optional<OpWork> ModelGemm(std::string_view op_name, const OpInputs& in) {
  const GemmOp* op = Find(op_name);
  if (op == nullptr) return std::nullopt;
  // The position of A; B follows it.
  size_t ia = 0;
  switch (op->layout) {
    case Layout::kMatmul:
      if (DimsAt(in, 1) == nullptr) return std::nullopt;
      return Matmul(in.dims[0], in.dims[1], TypeAt(in, 0));
    case Layout::kGroupedMm:
      return GroupedMm(in);
    case Layout::kXw:
      return Xw(*op, in);
    case Layout::kLinear: {
      const Dims* x = DimsAt(in, 0);
      const Dims* w = DimsAt(in, 1);
      if (x == nullptr || w == nullptr || x->empty() || w->size() != 2) return std::nullopt;
      int64_t m = Numel(*x) / std::max<int64_t>(x->back(), 1);
      const Dims* bias = DimsAt(in, 2);
      return Uniform(1, m, (*w)[0], x->back(), bias != nullptr && !bias->empty(), TypeAt(in, 0));
    }
    case Layout::kAddmm:
    case Layout::kBaddbmm:
      ia = 1;
      break;
    default:
      break;
  }
  const Dims* a = DimsAt(in, ia);
  const Dims* b = DimsAt(in, ia + 1);
  bool batched = op->layout == Layout::kBmm || op->layout == Layout::kBaddbmm;
  size_t rank = batched ? 3 : 2;
  if (a == nullptr || b == nullptr || a->size() != rank || b->size() != rank) return std::nullopt;
  int64_t batch = batched ? (*a)[0] : 1;
  int64_t m = (*a)[rank - 2], k = (*a)[rank - 1], n = (*b)[rank - 1];
  bool bias = op->layout == Layout::kAddmm || op->layout == Layout::kBaddbmm;
  if (op->layout != Layout::kScaledMm) return Uniform(batch, m, n, k, bias, TypeAt(in, ia));
  // FP8 operands write a 16-bit result (TraceLens's assumption; the output dtype is a scalar
  // argument the trace records as a number).
  double bpe = MatrixBytesPerElement(TypeAt(in, 0));
  double out = bpe == 1 ? 2 : bpe;
  if (bpe <= 0) return std::nullopt;
  return GemmWork(1, m, n, k, ScaledMmHasBias(in, n), bpe, bpe, bpe, out,
                  MatrixSpecForDtype(TypeAt(in, 0)));
}

}  // namespace vigil::trace
