// SPDX-License-Identifier: Apache-2.0
// Work model of embedding lookups and the gathers they are built on: aten::embedding (weight,
// indices), aten::index_select (self, dim, index) and aten::embedding_dense_backward. TraceLens
// does not model these; the formulas are ours (docs/work-model.md): a lookup is pure data
// movement (indices read, the selected rows read and written, no FLOPs); the backward adds each
// gradient row into the weight gradient (one FLOP per element) and writes that gradient whole.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesEmbedding(std::string_view op_name);
// Category "Embedding_fwd" or "Embedding_bwd".
std::optional<OpWork> ModelEmbedding(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
