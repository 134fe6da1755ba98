// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/normalization.h"

#include <vector>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

enum class NormKind : uint8_t {
  kLayer,
  kBatch,
  kGroup,
  kInstance,
  kRms,
  kLayerBwd,
  kBatchBwd,
  kGroupBwd,
  kRmsBwd,
};

struct NormOp {
  std::string_view name;
  NormKind kind = NormKind::kLayer;
};

// Every spelling PyTorch's backends record; the plain and native_ forms share one layout, the
// miopen_/cudnn_ forms of batch-norm backward have their own (input first, no train flag).
constexpr NormOp kOps[] = {
    {"aten::layer_norm", NormKind::kLayer},
    {"aten::native_layer_norm", NormKind::kLayer},
    {"aten::miopen_layer_norm", NormKind::kLayer},
    {"aten::cudnn_layer_norm", NormKind::kLayer},
    {"aten::batch_norm", NormKind::kBatch},
    {"aten::native_batch_norm", NormKind::kBatch},
    {"aten::miopen_batch_norm", NormKind::kBatch},
    {"aten::cudnn_batch_norm", NormKind::kBatch},
    {"aten::_native_batch_norm_legit", NormKind::kBatch},
    {"aten::group_norm", NormKind::kGroup},
    {"aten::native_group_norm", NormKind::kGroup},
    {"aten::miopen_group_norm", NormKind::kGroup},
    {"aten::cudnn_group_norm", NormKind::kGroup},
    {"aiter::_groupnorm_run", NormKind::kGroup},
    {"aten::instance_norm", NormKind::kInstance},
    {"aten::native_instance_norm", NormKind::kInstance},
    {"aten::miopen_instance_norm", NormKind::kInstance},
    {"aten::cudnn_instance_norm", NormKind::kInstance},
    {"aten::_fused_rms_norm", NormKind::kRms},
    {"aten::rms_norm", NormKind::kRms},
    {"aten::layer_norm_backward", NormKind::kLayerBwd},
    {"aten::native_layer_norm_backward", NormKind::kLayerBwd},
    {"aten::miopen_layer_norm_backward", NormKind::kLayerBwd},
    {"aten::cudnn_layer_norm_backward", NormKind::kLayerBwd},
    {"aten::batch_norm_backward", NormKind::kBatchBwd},
    {"aten::native_batch_norm_backward", NormKind::kBatchBwd},
    {"aten::miopen_batch_norm_backward", NormKind::kBatchBwd},
    {"aten::cudnn_batch_norm_backward", NormKind::kBatchBwd},
    {"aten::group_norm_backward", NormKind::kGroupBwd},
    {"aten::native_group_norm_backward", NormKind::kGroupBwd},
    {"aten::miopen_group_norm_backward", NormKind::kGroupBwd},
    {"aten::cudnn_group_norm_backward", NormKind::kGroupBwd},
    {"aten::rms_norm_backward", NormKind::kRmsBwd},
    {"aten::native_rms_norm_backward", NormKind::kRmsBwd},
    {"aten::_fused_rms_norm_backward", NormKind::kRmsBwd},
};

const NormOp* Find(std::string_view name) {
  for (const NormOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// What the formulas need, read from the operator's own argument layout.
struct NormShape {
  double elems = 0;     // elements of the normalised activation
  double channels = 0;  // elements of one per-channel (or per-normalised-shape) tensor
  std::string_view dtype;
  bool affine = true;
  bool bias = true;
  bool training = true;
  std::vector<bool> mask = {true};  // backward output_mask: grad_input, grad_weight, grad_bias
};

// A boolean argument as recorded ("True"/"False"); an unrecorded one is false.
bool Flag(std::string_view text) { return text == "True" || text == "1"; }

// Channels as the product of a recorded normalized_shape list ("[768]", "[16, 32, 32]").
std::optional<double> ShapeProduct(std::string_view text) {
  std::vector<int64_t> dims;
  if (!ParseIntList(text, &dims)) return std::nullopt;
  return double(Numel(dims));
}

// Per-channel dimension of an NC... activation.
std::optional<double> ChannelDim(const std::vector<int64_t>& dims) {
  if (dims.size() < 2) return std::nullopt;
  return double(dims[1]);
}

std::optional<NormShape> ReadShape(std::string_view name, NormKind kind, const OpInputs& in) {
  NormShape s;
  // A weight or bias slot that is recorded counts as present, even when it holds no tensor: that
  // is how TraceLens reads it, and the per-channel tensors are a small share of the bytes.
  size_t activation = 0;
  std::optional<double> channels;
  switch (kind) {
    case NormKind::kLayer:
      // normalized_shape; traces without `Concrete Inputs` (PyTorch before 2.0) leave it out, and
      // then the weight, which has that shape, gives it.
      channels = ShapeProduct(InputConcrete(in, 1));
      if (!channels && !InputDims(in, 2).empty()) channels = double(Numel(InputDims(in, 2)));
      s.affine = in.dims.size() > 2;
      s.bias = in.dims.size() > 3;
      break;
    case NormKind::kBatch:
    case NormKind::kInstance:
      channels = ChannelDim(InputDims(in, 0));
      s.affine = in.dims.size() > 2;
      s.training = Flag(InputConcrete(in, 5));
      break;
    case NormKind::kGroup:
      channels = ChannelDim(InputDims(in, 0));
      s.affine = in.dims.size() > 2;
      break;
    case NormKind::kRms:
      channels = ShapeProduct(InputConcrete(in, 1));
      s.affine = in.dims.size() > 2;
      s.bias = false;
      s.training = false;
      break;
    case NormKind::kLayerBwd:
      // (grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask). Without
      // `Concrete Inputs` the weight gives the shape, and the gradients are those of the tensors
      // recorded (grad_input always; grad_weight and grad_bias when weight and bias are there).
      activation = 1;
      channels = ShapeProduct(InputConcrete(in, 2));
      if (!ParseBoolList(InputConcrete(in, 7), &s.mask) || s.mask.size() < 3) {
        if (!InputConcrete(in, 7).empty()) return std::nullopt;
        s.mask = {true, !InputDims(in, 5).empty(), !InputDims(in, 6).empty()};
      }
      if (!channels && !InputDims(in, 5).empty()) channels = double(Numel(InputDims(in, 5)));
      s.affine = s.mask[1];
      s.bias = s.mask[2];
      break;
    case NormKind::kBatchBwd:
      // native_: (grad_out, input, weight, ..., train, eps, mask); miopen_/cudnn_: (input,
      // grad_out, weight, ...), eval statistics only.
      if (name == "aten::miopen_batch_norm_backward" || name == "aten::cudnn_batch_norm_backward") {
        s.training = false;
      } else {
        activation = 1;
        s.training = Flag(InputConcrete(in, 7));
      }
      channels = ChannelDim(InputDims(in, activation));
      s.affine = in.dims.size() > 2;
      break;
    case NormKind::kGroupBwd: {
      // (grad_out, input, mean, rstd, weight, N, C, HxW, group, mask): the statistics are per
      // group, so C / group elements per "channel".
      activation = 1;
      std::optional<double> groups = ParseNumber(InputConcrete(in, 8));
      std::optional<double> c = ChannelDim(InputDims(in, 1));
      if (!groups || !c || *groups <= 0) return std::nullopt;
      channels = *c / *groups;
      s.affine = in.dims.size() > 5;
      if (!ParseBoolList(InputConcrete(in, 9), &s.mask) || s.mask.empty()) return std::nullopt;
      break;
    }
    case NormKind::kRmsBwd:
      activation = 1;
      channels = ShapeProduct(InputConcrete(in, 2));
      s.affine = in.dims.size() > 4;
      s.bias = false;
      s.training = false;
      if (!ParseBoolList(InputConcrete(in, 5), &s.mask) || s.mask.size() < 2) return std::nullopt;
      break;
  }
  if (!channels || *channels <= 0 || in.dims.size() <= activation) return std::nullopt;
  s.channels = *channels;
  s.elems = double(Numel(InputDims(in, activation)));
  s.dtype = InputType(in, activation);
  return s;
}

// Forward: 3 FLOPs per channel to fold mean/std/weight/bias into a scale and shift, 3 more for
// 1/sqrt(var + eps), 3 per element for the statistics when they come from the batch, and a
// multiply-add per element.
double ForwardFlops(const NormShape& s) {
  double flops = 6 * s.channels + 2 * s.elems;
  if (s.training) flops += 3 * s.elems;
  return flops;
}

// Activation in and out; mean and variance always, weight and bias when affine, and the updated
// running statistics when training.
double ForwardBytes(const NormShape& s, int bpe) {
  int tensors = 2;
  if (s.affine) tensors += s.bias ? 2 : 1;
  if (s.training) tensors += 2;
  return s.elems * 2 * bpe + tensors * s.channels * bpe;
}

double BackwardFlops(const NormShape& s) {
  double per_channel_elems = s.elems / s.channels;
  double per_channel = (s.training ? 0 : 3) + 4 * per_channel_elems;
  if (s.mask[0]) {
    if (s.training) per_channel += 5 * per_channel_elems;
  } else {
    per_channel += 2 * per_channel_elems;
  }
  return s.channels * per_channel;
}

double BackwardBytes(const NormShape& s, int bpe) {
  double bytes = s.elems * bpe + s.elems * bpe * (s.mask[0] && s.training ? 2 : 1);
  if (s.training) bytes += s.channels * bpe;  // saved 1/std
  if (s.affine) {
    bytes += s.channels * bpe;                                     // weight
    if (s.training) bytes += s.channels * bpe * (s.bias ? 2 : 1);  // grad_weight, grad_bias
  }
  return bytes;
}

// RMS norm: per row, sum of squares and 1/sqrt (2 per element + 2); then scale each element, and
// multiply by the weight when affine.
double RmsFlops(const NormShape& s) {
  return s.elems / s.channels * (2 * s.channels + 2) + s.elems * (s.affine ? 2 : 1);
}

double RmsBackwardFlops(const NormShape& s) {
  double flops = (s.affine ? s.elems : 0) + s.elems;
  if (s.mask[0]) flops += 6 * s.elems;
  if (s.mask[1] && s.affine) {
    flops += s.elems;
    if (s.elems / s.channels > 1) flops += s.elems;
  }
  return flops;
}

}  // namespace

bool HandlesNormalization(std::string_view op_name) { return Find(op_name) != nullptr; }

std::optional<OpWork> ModelNormalization(std::string_view op_name, const OpInputs& inputs) {
  const NormOp* op = Find(op_name);
  if (op == nullptr) return std::nullopt;
  std::optional<NormShape> s = ReadShape(op_name, op->kind, inputs);
  if (!s) return std::nullopt;
  std::optional<int> bpe = OperandBytes(s->dtype);
  if (!bpe) return std::nullopt;
  OpWork work;
  work.spec = VectorSpec(s->dtype);
  switch (op->kind) {
    case NormKind::kLayer:
    case NormKind::kBatch:
    case NormKind::kGroup:
    case NormKind::kInstance:
      work.category = "Normalization_fwd";
      work.flops = ForwardFlops(*s);
      work.bytes = ForwardBytes(*s, *bpe);
      break;
    case NormKind::kRms:
      work.category = "Normalization_fwd";
      work.flops = RmsFlops(*s);
      work.bytes = s->elems * 2 * *bpe + (s->affine ? s->channels * *bpe : 0);
      break;
    case NormKind::kLayerBwd:
    case NormKind::kBatchBwd:
    case NormKind::kGroupBwd:
      work.category = "Normalization_bwd";
      work.flops = BackwardFlops(*s);
      work.bytes = BackwardBytes(*s, *bpe);
      break;
    case NormKind::kRmsBwd:
      work.category = "Normalization_bwd";
      work.flops = RmsBackwardFlops(*s);
      work.bytes = s->elems * 3 * *bpe + (s->affine ? 2 * s->channels * *bpe : 0);
      break;
  }
  return work;
}

}  // namespace vigil::trace
