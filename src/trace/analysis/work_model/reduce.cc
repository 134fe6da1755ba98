// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/reduce.h"

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

struct ReduceOp {
  std::string_view name;
  bool scan = false;  // cumulative: one output per input element
};

constexpr ReduceOp kOps[] = {
    {"aten::sum"},
    {"aten::mean"},
    {"aten::max"},
    {"aten::min"},
    {"aten::norm"},
    {"aten::linalg_norm"},
    {"aten::std"},
    {"aten::var"},
    {"aten::logsumexp"},
    {"aten::cumsum", true},
    {"aten::cumprod", true},
    {"aten::amin"},
    {"aten::amax"},
    // Beyond TraceLens:
    {"aten::prod"},
    {"aten::any"},
    {"aten::all"},
    {"aten::argmax"},
    {"aten::argmin"},
    {"aten::nansum"},
    {"aten::linalg_vector_norm"},
    {"aten::var_mean"},
    {"aten::std_mean"},
    {"aten::cumsum_", true},
    {"aten::logcumsumexp", true},
};

const ReduceOp* Find(std::string_view name) {
  for (const ReduceOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

bool HandlesReduce(std::string_view op_name) { return Find(op_name) != nullptr; }

std::optional<OpWork> ModelReduce(std::string_view op_name, const OpInputs& inputs) {
  const ReduceOp* op = Find(op_name);
  if (op == nullptr || inputs.dims.empty()) return std::nullopt;
  std::string_view dtype = InputType(inputs, 0);
  std::optional<int> bpe = OperandBytes(dtype);
  if (!bpe) return std::nullopt;
  double in_elems = double(Numel(inputs.dims[0]));
  // A reduction writes one element per kept position; TraceLens counts one element in all, as
  // the reduced dimensions are not read back from the recorded arguments. Kept so the bytes
  // compare; the output is the small side of a reduction's traffic (see docs/work-model.md).
  double out_elems = op->scan ? in_elems : 1;
  OpWork work;
  work.category = "Reduce_fwd";
  work.spec = VectorSpec(dtype);
  work.flops = in_elems;
  work.bytes = (in_elems + out_elems) * *bpe;
  return work;
}

}  // namespace vigil::trace
