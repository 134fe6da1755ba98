// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/softmax.h"

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

// (self, dim, half_to_float): a true flag writes float from a half-precision input.
bool IsForward(std::string_view name) {
  return name == "aten::_softmax" || name == "aten::softmax" || name == "aten::_log_softmax" ||
         name == "aten::log_softmax";
}

// (grad_output, output, dim, input_dtype).
bool IsBackward(std::string_view name) {
  return name == "aten::_softmax_backward_data" || name == "aten::_log_softmax_backward_data";
}

bool HalfToFloat(std::string_view name, const OpInputs& in) {
  return (name == "aten::_softmax" || name == "aten::_log_softmax") &&
         InputConcrete(in, 2) == "True";
}

}  // namespace

bool HandlesSoftmax(std::string_view op_name) { return IsForward(op_name) || IsBackward(op_name); }

std::optional<OpWork> ModelSoftmax(std::string_view op_name, const OpInputs& inputs) {
  if (InputDims(inputs, 0).empty()) return std::nullopt;
  double n = double(Numel(InputDims(inputs, 0)));
  std::optional<int> bpe = OperandBytes(InputType(inputs, 0));
  if (!bpe) return std::nullopt;
  OpWork work;
  work.spec = VectorSpec(InputType(inputs, 0));
  if (IsForward(op_name)) {
    int bpe_out = HalfToFloat(op_name, inputs) ? 4 : *bpe;
    work.category = "Softmax_fwd";
    work.flops = 5 * n;
    work.bytes = n * (*bpe + bpe_out);
    return work;
  }
  if (IsBackward(op_name)) {
    std::optional<int> bpe_y = OperandBytes(InputType(inputs, 1));
    if (!bpe_y) return std::nullopt;
    work.category = "Softmax_bwd";
    work.flops = 4 * n;
    work.bytes = n * (2 * *bpe + *bpe_y);  // grad_output and output read, grad_input written
    return work;
  }
  return std::nullopt;
}

}  // namespace vigil::trace
