// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/rope.h"

#include <vector>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

bool IsCachedRope(std::string_view name) {
  return name == "sgl_kernel::rotary_embedding" || name == "_C::rotary_embedding";
}

}  // namespace

bool HandlesRope(std::string_view op_name) {
  return IsCachedRope(op_name) || op_name == "FusedRoPEFunc";
}

std::optional<OpWork> ModelRope(std::string_view op_name, const OpInputs& inputs) {
  double elems = 0;
  std::string_view dtype;
  if (IsCachedRope(op_name)) {
    // Query (input 1) and key (input 2, absent for query-only calls) are rotated in place; of
    // each head of `head_size` (input 3) only the first rot_dim elements turn, rot_dim being the
    // width of the cos/sin cache (input 4, [max_position, rot_dim]).
    if (InputDims(inputs, 1).empty()) return std::nullopt;
    elems = double(Numel(InputDims(inputs, 1)));
    if (!InputDims(inputs, 2).empty()) elems += double(Numel(InputDims(inputs, 2)));
    std::optional<double> head_size = ParseNumber(InputConcrete(inputs, 3));
    const std::vector<int64_t>& cache = InputDims(inputs, 4);
    if (head_size && *head_size > 0 && cache.size() == 2 && cache[1] > 0 &&
        double(cache[1]) < *head_size) {
      elems = elems / *head_size * double(cache[1]);
    }
    dtype = InputType(inputs, 1);
  } else if (op_name == "FusedRoPEFunc") {
    if (InputDims(inputs, 0).empty()) return std::nullopt;
    elems = double(Numel(InputDims(inputs, 0)));
    dtype = InputType(inputs, 0);
  } else {
    return std::nullopt;
  }
  std::optional<int> bpe = OperandBytes(dtype);
  if (!bpe) return std::nullopt;
  OpWork work;
  work.category = "RoPE_fwd";
  work.spec = VectorSpec(dtype);
  work.flops = 3 * elems;
  work.bytes = 2 * elems * *bpe;
  return work;
}

}  // namespace vigil::trace
