// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/copy.h"

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/elementwise.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

bool IsCopy(std::string_view name) { return name == "aten::copy_" || name == "aten::copy"; }

bool IsFill(std::string_view name) { return name == "aten::fill_" || name == "aten::zero_"; }

}  // namespace

bool HandlesCopy(std::string_view op_name) { return IsCopy(op_name) || IsFill(op_name); }

std::optional<OpWork> ModelCopy(std::string_view op_name, const OpInputs& inputs) {
  // copy_(self, src): input 0 is the destination, whose dtype names the peak; input 1 the source.
  if (IsCopy(op_name)) return UnaryWork(inputs, 1);
  if (!IsFill(op_name) || inputs.dims.empty()) return std::nullopt;
  std::optional<int> bpe = OperandBytes(InputType(inputs, 0));
  if (!bpe) return std::nullopt;
  OpWork work;
  work.category = "UnaryElementwise";
  work.spec = VectorSpec(InputType(inputs, 0));
  work.flops = 0;
  work.bytes = double(Numel(inputs.dims[0])) * *bpe;
  return work;
}

}  // namespace vigil::trace
