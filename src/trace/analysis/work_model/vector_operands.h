// SPDX-License-Identifier: Apache-2.0
// What the vector operator families (normalisation, elementwise, reductions, softmax, embedding,
// RoPE, copies) read from an operator's recorded inputs: positional access that tolerates short
// lists, element sizes as TraceLens counts them, the vector peak a dtype is held to, and the
// Python-literal lists PyTorch writes in `Concrete Inputs` ("[768]", "[True, False, True]").
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// Input `i`'s dims, type and concrete text; empty when the operator recorded fewer inputs.
const std::vector<int64_t>& InputDims(const OpInputs& in, size_t i);
std::string_view InputType(const OpInputs& in, size_t i);
std::string_view InputConcrete(const OpInputs& in, size_t i);

// Bytes per element of an operand: a tensor's dtype size, and 4 for a Python number recorded as
// "Scalar" (TraceLens's convention). nullopt for a type with no known size ("", "ScalarList",
// unknown dtypes): the bytes moved are then unknown and the operator stays unmodelled.
std::optional<int> OperandBytes(std::string_view type);

// The vector peak for work done in `dtype` (TraceLens's `vector_<precision>`): float -> FP32,
// c10::BFloat16 -> BF16, c10::Half -> FP16, double -> FP64; integer, boolean and FP8 element
// types have no vector peak in the model (kUnknown, an empty `Compute Spec`).
ComputeSpec VectorSpec(std::string_view dtype);

// "[16, 32, 32]" -> {16, 32, 32}; "[]" -> {}; a bare "768" -> {768}. false on anything else.
bool ParseIntList(std::string_view text, std::vector<int64_t>* out);
// "[True, False]" -> {true, false}. false on anything else.
bool ParseBoolList(std::string_view text, std::vector<bool>* out);
// "2", "3.", "1e-05" -> the number; nullopt for "", "None" or text that is not a number.
std::optional<double> ParseNumber(std::string_view text);
// "[2., 2.]" -> {2, 2}. false on anything else (a bare number included).
bool ParseNumberList(std::string_view text, std::vector<double>* out);

}  // namespace vigil::trace
