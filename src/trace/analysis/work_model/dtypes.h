// SPDX-License-Identifier: Apache-2.0
// Element sizes of the dtypes PyTorch records in `Input type` ("float", "c10::BFloat16",
// "c10::Half", "long int", "c10::Float8_e4m3fn", ...), shared by every operator family.
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace vigil::trace {

// Bytes per element, or -1 when the type is not a tensor dtype ("Scalar", "ScalarList", "").
int BytesPerElement(std::string_view type);

// Elements of a tensor with these dims (1 for a 0-d tensor).
int64_t Numel(const std::vector<int64_t>& dims);

}  // namespace vigil::trace
