// SPDX-License-Identifier: Apache-2.0
// Work model of rotary position embedding operators: SGLang's sgl_kernel::rotary_embedding and
// vLLM's _C::rotary_embedding (positions, query, key, head_size, cos_sin_cache, is_neox), as
// TraceLens models the first (171dd747), and TransformerEngine's FusedRoPEFunc (input, freqs).
// Each rotated pair costs 4 multiplies and 2 adds (3 FLOPs per element of the rotated slice of
// each head); the rotated elements are read and written once, the cos/sin table is assumed cached.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesRope(std::string_view op_name);
// Category "RoPE_fwd".
std::optional<OpWork> ModelRope(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
