// SPDX-License-Identifier: Apache-2.0
// Work model of PyTorch's normalisation operators, forward and backward: layer, batch, group,
// instance and RMS norm (aten::layer_norm, native_batch_norm, miopen_/cudnn_batch_norm,
// native_group_norm, _fused_rms_norm, their _backward ops) and AITER's group norm. The formulas
// are TraceLens's (171dd747): statistics, the affine transform and the running-stat updates as
// FLOPs; activations read and written once, each per-channel tensor read or written once.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesNormalization(std::string_view op_name);
// Category "Normalization_fwd" or "Normalization_bwd".
std::optional<OpWork> ModelNormalization(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
