// SPDX-License-Identifier: Apache-2.0
// Work model of single-device reductions and scans: aten::sum, mean, max, min, amax, amin, norm,
// linalg_norm, std, var, logsumexp, cumsum, cumprod (TraceLens's list, 171dd747) and prod, any,
// all, argmax, argmin, nansum, linalg_vector_norm, var_mean, std_mean. One FLOP per input
// element; the input read once, the output written once.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesReduce(std::string_view op_name);
// Category "Reduce_fwd".
std::optional<OpWork> ModelReduce(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
