// SPDX-License-Identifier: Apache-2.0
// The registry of operator work models: one row per operator family (GEMM, convolution,
// attention, normalisation, elementwise, ...), each in its own file in this directory and listed
// once in op_models.cc. ModelOperator asks the rows in order; the first that knows the operator
// answers.
// Owner: trace. Immutable static data; thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

struct OpModel {
  std::string_view family;  // "gemm", "conv", "sdpa", ...: for docs and tests
  bool (*handles)(std::string_view op_name);
  // nullopt when the inputs do not have the shape the model needs (the operator stays unmodelled).
  std::optional<OpWork> (*model)(std::string_view op_name, const OpInputs& inputs);
};

std::span<const OpModel> AllOpModels();

std::optional<OpWork> ModelOperator(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
