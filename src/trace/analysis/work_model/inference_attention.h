// SPDX-License-Identifier: Apache-2.0
// Work model of serving-engine attention over a paged KV cache (vLLM unified attention, AITER's
// and SGLang's prefill/decode kernels) and the KV-cache writes next to it (sglang::store_cache):
// TraceLens's InferenceAttention category. A paged kernel's tensors are the whole cache pool, so
// its work comes from the step's token counts (OpInputs::step), which the serving engine writes
// into its step annotation: ParseServingStep reads them. FLOPs and bytes follow TraceLens
// (171dd747): causal attention within a prefill chunk, full attention to the cached context.
// Owner: trace. Pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// The token counts of a step annotation (a `user_annotation` event's name), in the formats of
// vLLM, SGLang and ATOM:
//   execute_<n>_context_<c>(sq<>sk<>sqsq<>sqsk<>)_generation_<g>(sq<>sk<>sqsq<>sqsk<>)
//   step[EXTEND|DECODE|MIXED ... c_sq=<> c_sk=<> c_sqsq=<> c_sqsk=<> g_sq=<> ...]
//   step[EXTEND bs=<b> toks=<t>]: b prompts of equal length, t/b tokens each (an estimate)
//   step[DECODE bs=<b>]: b decode tokens, KV lengths unknown (kv_known = false)
//   prefill[... tok=<t> ... sqsq=<> sqsk=<> sk=<>], decode[... tok=<t> ... sqsq=<> ...]
// nullopt for any other name, and for the formats that carry no per-request sums (vLLM's
// `execute_context_<c>(<n>)_generation_<g>(<n>)`, ATOM's without `sqsq=`). Where a step
// carries two annotations (SGLang writes its plain step[...] label next to the detailed one),
// the one with per-request sums is the one to use.
std::optional<ServingStep> ParseServingStep(std::string_view annotation);

bool HandlesInferenceAttention(std::string_view op_name);
std::optional<OpWork> ModelInferenceAttention(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
