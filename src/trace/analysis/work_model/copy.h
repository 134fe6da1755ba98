// SPDX-License-Identifier: Apache-2.0
// Work model of copies and casts: aten::copy_ / aten::copy (dst, src, non_blocking), the operator
// under which every device copy, cast and contiguous-making kernel is launched (aten::to,
// _to_copy, clone and contiguous only call it), counted as TraceLens counts it (171dd747): one
// FLOP per element, the source read at its dtype and the destination written at its own; and
// fills (aten::fill_, zero_), which write every element once.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesCopy(std::string_view op_name);
// Category "UnaryElementwise", as TraceLens files aten::copy_.
std::optional<OpWork> ModelCopy(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
