// SPDX-License-Identifier: Apache-2.0
// Work model of elementwise operators: unary (aten::sigmoid, silu, gelu, relu, neg, pow, ...),
// binary with broadcasting and Python-number operands (aten::add, mul, div, sub, comparisons,
// activation backwards, ...), ternary (aten::where, addcmul, addcdiv, lerp), gated activations
// (silu_and_mul and friends) and nearest-neighbour upsampling. TraceLens's formulas (171dd747)
// for the operators it models: one FLOP per output element, every operand read once and the
// output written once. Copies and casts (aten::copy_) are in copy.h.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesElementwise(std::string_view op_name);
// Category "UnaryElementwise", "BinaryElementwise" or "TernaryElementwise".
std::optional<OpWork> ModelElementwise(std::string_view op_name, const OpInputs& inputs);

// A unary elementwise operator as TraceLens reads it: input 0 is the operand and sets the element
// count; input 1, when it holds a tensor, is where the result goes (its dtype sizes the write).
// `flops_per_element` scales the FLOPs. Shared with the copy family.
std::optional<OpWork> UnaryWork(const OpInputs& inputs, double flops_per_element);

}  // namespace vigil::trace
