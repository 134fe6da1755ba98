// SPDX-License-Identifier: Apache-2.0
// A cpu_op's recorded inputs (record_shapes=True) as the work model's OpInputs, parsed from the
// JSON text the reader kept (RankTrace::op_shapes). Why on demand: most operators are never
// asked for (no kernel, or no model for them), and the reader must stay as fast as without shapes.
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

// The inputs recorded on this row, nullopt when it has none or their text does not parse. An
// input that is a list of tensors (TensorList) gets empty dims and strides.
std::optional<OpInputs> RecordedInputs(const RankTrace& trace, uint32_t row);

// Parses the four JSON arrays as PyTorch writes them ("[[512, 64], [], []]",
// "[\"float\", \"Scalar\", \"\"]"). An absent array is "" and leaves its list empty. False when
// a present array does not parse. Exposed for tests.
bool ParseRecordedInputs(std::string_view dims, std::string_view types, std::string_view strides,
                         std::string_view concrete, OpInputs* out);

}  // namespace vigil::trace
