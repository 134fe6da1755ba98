// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/elementwise.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

using Shape = std::vector<int64_t>;

// One operand in (input 0), one result out. The first nine are operators TraceLens models (its
// aten::copy and copy_ are in copy.cc); the rest follow the same formula (one FLOP per element,
// whatever the function costs).
constexpr std::string_view kUnary[] = {
    "aten::clamp_min",
    "aten::clamp_min_",
    "aten::clamp_max",
    "aten::clamp_max_",
    "aten::sigmoid",
    "aten::rsqrt",
    "aten::silu",
    "aten::neg",
    "aten::pow",
    // Beyond TraceLens:
    "aten::sigmoid_",
    "aten::rsqrt_",
    "aten::silu_",
    "aten::neg_",
    "aten::pow_",
    "aten::relu",
    "aten::relu_",
    "aten::gelu",
    "aten::gelu_",
    "aten::tanh",
    "aten::tanh_",
    "aten::exp",
    "aten::exp_",
    "aten::exp2",
    "aten::expm1",
    "aten::log",
    "aten::log_",
    "aten::log2",
    "aten::log10",
    "aten::log1p",
    "aten::sqrt",
    "aten::sqrt_",
    "aten::abs",
    "aten::abs_",
    "aten::sin",
    "aten::cos",
    "aten::erf",
    "aten::erfinv",
    "aten::reciprocal",
    "aten::clamp",
    "aten::clamp_",
    "aten::hardtanh",
    "aten::hardtanh_",
    "aten::leaky_relu",
    "aten::leaky_relu_",
    "aten::elu",
    "aten::elu_",
    "aten::selu",
    "aten::celu",
    "aten::hardswish",
    "aten::hardswish_",
    "aten::hardsigmoid",
    "aten::mish",
    "aten::softplus",
    "aten::threshold",
    "aten::threshold_",
    "aten::nan_to_num",
    "aten::nan_to_num_",
    "aten::floor",
    "aten::ceil",
    "aten::round",
    "aten::trunc",
    "aten::frac",
    "aten::sign",
    "aten::sgn",
    "aten::logical_not",
    "aten::bitwise_not",
    "aten::square",
};

// Two operands in, broadcast against each other. `bool_result`: a comparison, whose result is
// one byte per element. The first nine are TraceLens's.
struct BinaryOp {
  std::string_view name;
  bool bool_result = false;
};
constexpr BinaryOp kBinary[] = {
    {"aten::div"},
    {"aten::div_"},
    {"aten::mul"},
    {"aten::mul_"},
    {"aten::add"},
    {"aten::add_"},
    {"aten::sigmoid_backward"},
    {"aten::threshold_backward"},
    {"LigerSiLUMulFunction"},  // Liger-Kernel's fused silu(a) * b
    // Beyond TraceLens:
    {"aten::sub"},
    {"aten::sub_"},
    {"aten::rsub"},
    {"aten::maximum"},
    {"aten::minimum"},
    {"aten::fmod"},
    {"aten::remainder"},
    {"aten::floor_divide"},
    {"aten::atan2"},
    {"aten::bitwise_and"},
    {"aten::bitwise_or"},
    {"aten::bitwise_xor"},
    {"aten::xlogy"},
    {"aten::tanh_backward"},
    {"aten::gelu_backward"},
    {"aten::silu_backward"},
    {"aten::hardtanh_backward"},
    {"aten::leaky_relu_backward"},
    {"aten::hardswish_backward"},
    {"aten::masked_fill"},
    {"aten::masked_fill_"},
    {"aten::eq", true},
    {"aten::ne", true},
    {"aten::lt", true},
    {"aten::le", true},
    {"aten::gt", true},
    {"aten::ge", true},
    {"aten::logical_and", true},
    {"aten::logical_or", true},
    {"aten::logical_xor", true},
};

// Three operands in. `result` is the operand whose dtype the result takes.
struct TernaryOp {
  std::string_view name;
  double flops_per_element = 1;
  size_t result = 0;
};
constexpr TernaryOp kTernary[] = {
    {"aten::where", 1, 1},     // (condition, self, other): one select
    {"aten::addcmul", 3, 0},   // self + value * t1 * t2
    {"aten::addcmul_", 3, 0},  //
    {"aten::addcdiv", 3, 0},   // self + value * t1 / t2
    {"aten::addcdiv_", 3, 0},  //
    {"aten::lerp", 3, 0},      // self + weight * (end - self)
    {"aten::lerp_", 3, 0},     //
};

// Gated activations of inference engines: (out[..., d], input[..., 2d]) -> act(gate) * up.
struct GatedOp {
  std::string_view name;
  double flops_per_element = 5;
};
constexpr GatedOp kGated[] = {
    {"aiter::silu_and_mul", 5},
    {"_C::silu_and_mul", 5},
    {"sgl_kernel::silu_and_mul", 5},
    {"aiter::gelu_and_mul", 8},
    {"aiter::gelu_tanh_and_mul", 10},
    {"_C::gelu_and_mul", 8},
    {"_C::gelu_tanh_and_mul", 10},
    {"sgl_kernel::gelu_and_mul", 8},
    {"sgl_kernel::gelu_tanh_and_mul", 10},
};

// (input, output_size, scales...): one FLOP per output element; the input read, the output
// written.
constexpr std::string_view kUpsample[] = {
    "aten::upsample_nearest1d",        "aten::upsample_nearest2d",
    "aten::upsample_nearest3d",        "aten::_upsample_nearest_exact1d",
    "aten::_upsample_nearest_exact2d", "aten::_upsample_nearest_exact3d",
};

template <typename Table>
auto FindNamed(const Table& table, std::string_view name) -> decltype(&table[0]) {
  for (const auto& row : table) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

bool Listed(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// NumPy broadcasting; nullopt when the shapes do not broadcast.
std::optional<Shape> Broadcast(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;  // a 1 stretches to the other size, 0 included
  }
  return out;
}

std::optional<OpWork> BinaryWork(const OpInputs& in, bool bool_result) {
  if (in.dims.size() < 2) return std::nullopt;
  const Shape& a = in.dims[0];
  const Shape& b = in.dims[1];
  std::optional<Shape> out = Broadcast(a, b);
  std::optional<int> bpe_a = OperandBytes(InputType(in, 0));
  std::optional<int> bpe_b = OperandBytes(InputType(in, 1));
  if (!out || !bpe_a || !bpe_b) return std::nullopt;
  // The result's size: an out= tensor when one is recorded; else one byte for a comparison;
  // else the wider operand when both are tensors, and the tensor's own when one is a 0-d tensor
  // or a Python number (its type does not promote the result).
  std::optional<int> bpe_out;
  if (in.dims.size() > 2 && !in.dims[2].empty()) {
    bpe_out = OperandBytes(InputType(in, 2));
  } else if (bool_result) {
    bpe_out = 1;
  } else if (!a.empty() && !b.empty()) {
    bpe_out = std::max(*bpe_a, *bpe_b);
  } else {
    bpe_out = bpe_a;
  }
  if (!bpe_out) return std::nullopt;
  double n_out = double(Numel(*out));
  OpWork work;
  work.category = "BinaryElementwise";
  work.spec = VectorSpec(InputType(in, 0));
  work.flops = n_out;
  work.bytes = double(Numel(a)) * *bpe_a + double(Numel(b)) * *bpe_b + n_out * *bpe_out;
  return work;
}

std::optional<OpWork> TernaryWork(const OpInputs& in, const TernaryOp& op) {
  if (in.dims.size() < 3) return std::nullopt;
  std::optional<Shape> out = Broadcast(in.dims[0], in.dims[1]);
  if (out) out = Broadcast(*out, in.dims[2]);
  if (!out) return std::nullopt;
  double bytes = 0;
  for (size_t i = 0; i < 3; ++i) {
    std::optional<int> bpe = OperandBytes(InputType(in, i));
    if (!bpe) return std::nullopt;
    bytes += double(Numel(in.dims[i])) * *bpe;
  }
  std::string_view result_type = InputType(in, op.result);
  std::optional<int> bpe_out = OperandBytes(result_type);
  if (!bpe_out) return std::nullopt;
  double n_out = double(Numel(*out));
  OpWork work;
  work.category = "TernaryElementwise";
  work.spec = VectorSpec(result_type);
  work.flops = op.flops_per_element * n_out;
  work.bytes = bytes + n_out * *bpe_out;
  return work;
}

std::optional<OpWork> GatedWork(const OpInputs& in, const GatedOp& op) {
  if (in.dims.size() < 2 || in.dims[0].empty()) return std::nullopt;
  std::optional<int> bpe_out = OperandBytes(InputType(in, 0));
  std::optional<int> bpe_in = OperandBytes(InputType(in, 1));
  if (!bpe_out || !bpe_in) return std::nullopt;
  double n = double(Numel(in.dims[0]));
  OpWork work;
  work.category = "UnaryElementwise";
  work.spec = VectorSpec(InputType(in, 1));
  work.flops = op.flops_per_element * n;
  work.bytes = 2 * n * *bpe_in + n * *bpe_out;  // gate and up read, product written
  return work;
}

std::optional<OpWork> UpsampleWork(const OpInputs& in) {
  const Shape& input = InputDims(in, 0);
  if (input.size() < 3) return std::nullopt;
  size_t spatial = input.size() - 2;
  Shape out(input.begin(), input.begin() + 2);
  Shape size;
  if (ParseIntList(InputConcrete(in, 1), &size) && size.size() == spatial) {
    out.insert(out.end(), size.begin(), size.end());
  } else {
    // output_size not given: scale factors follow it, one argument per spatial dimension, or one
    // list (the .vec overload: "[2., 2.]").
    std::vector<double> scales;
    if (!ParseNumberList(InputConcrete(in, 2), &scales)) scales.clear();
    for (size_t d = scales.size(); d < spatial; ++d) {
      std::optional<double> scale = ParseNumber(InputConcrete(in, 2 + d));
      if (!scale) return std::nullopt;
      scales.push_back(*scale);
    }
    if (scales.size() != spatial) return std::nullopt;
    for (size_t d = 0; d < spatial; ++d) {
      if (scales[d] <= 0) return std::nullopt;
      out.push_back(int64_t(std::floor(double(input[2 + d]) * scales[d])));
    }
  }
  std::optional<int> bpe = OperandBytes(InputType(in, 0));
  if (!bpe) return std::nullopt;
  double n_out = double(Numel(out));
  OpWork work;
  work.category = "UnaryElementwise";
  work.spec = VectorSpec(InputType(in, 0));
  work.flops = n_out;
  work.bytes = (double(Numel(input)) + n_out) * *bpe;
  return work;
}

}  // namespace

std::optional<OpWork> UnaryWork(const OpInputs& in, double flops_per_element) {
  if (in.dims.empty()) return std::nullopt;
  std::optional<int> bpe_in = OperandBytes(InputType(in, 0));
  std::optional<int> bpe_out = bpe_in;
  if (in.dims.size() > 1 && !in.dims[1].empty()) bpe_out = OperandBytes(InputType(in, 1));
  if (!bpe_in || !bpe_out) return std::nullopt;
  double n = double(Numel(in.dims[0]));
  OpWork work;
  work.category = "UnaryElementwise";
  work.spec = VectorSpec(InputType(in, 0));
  work.flops = flops_per_element * n;
  work.bytes = n * (*bpe_in + *bpe_out);
  return work;
}

bool HandlesElementwise(std::string_view op_name) {
  return Listed(kUnary, op_name) || FindNamed(kBinary, op_name) != nullptr ||
         FindNamed(kTernary, op_name) != nullptr || FindNamed(kGated, op_name) != nullptr ||
         Listed(kUpsample, op_name);
}

std::optional<OpWork> ModelElementwise(std::string_view op_name, const OpInputs& inputs) {
  if (Listed(kUnary, op_name)) return UnaryWork(inputs, 1);
  if (const BinaryOp* op = FindNamed(kBinary, op_name)) return BinaryWork(inputs, op->bool_result);
  if (const TernaryOp* op = FindNamed(kTernary, op_name)) return TernaryWork(inputs, *op);
  if (const GatedOp* op = FindNamed(kGated, op_name)) return GatedWork(inputs, *op);
  if (Listed(kUpsample, op_name)) return UpsampleWork(inputs);
  return std::nullopt;
}

}  // namespace vigil::trace
