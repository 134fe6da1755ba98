// SPDX-License-Identifier: Apache-2.0
// Work model of softmax and log-softmax, forward (aten::_softmax, softmax, _log_softmax,
// log_softmax) and backward (aten::_softmax_backward_data, _log_softmax_backward_data).
// TraceLens does not model these; the formulas are ours (docs/work-model.md): 5 FLOPs per
// element forward (max, subtract, exp, sum, divide or log), 4 backward; one pass over the data
// (a row is assumed to stay on chip between the statistics and the normalisation).
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesSoftmax(std::string_view op_name);
// Category "Softmax_fwd" or "Softmax_bwd".
std::optional<OpWork> ModelSoftmax(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
