// SPDX-License-Identifier: Apache-2.0
// Work model of unfused mixture-of-experts layers (vLLM's moe_forward over Triton matmul_ogs
// kernels, TraceLens's MoE_unfused category): the up (gate+up when gated) and down expert GEMMs
// of every token's top-k experts. The layer's operator records only hidden states [M, K] and
// router logits [M, E]; the rest is OpInputs::moe (the TopK operator's k, the weight dtype and
// gating from the kernel names: functions below). As in TraceLens (171dd747) the expert width
// equals the hidden size (the trace does not record it) and weights are read once per expert a
// token is routed to, E_active = E * (1 - ((E - k) / E)^M) of them under uniform routing.
// AITER's fused MoE operators (aiter::fmoe_g1u1, fmoe_fp8_blockscale_g1u1) record their
// weights and top-k, and are modelled from their inputs alone (TraceLens's FusedMoE formula).
// Owner: trace. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// For whoever fills OpInputs::moe from the kernels a MoE layer launched:
bool IsMoeGemmKernel(std::string_view kernel_name);  // a Triton "matmul_ogs" expert GEMM
// The expert weights' dtype a kernel name spells: "FP4" (mxfp4, fp4), "FP8" (fp8, e4m3), "".
std::string MoeWeightDtypeFromKernel(std::string_view kernel_name);
bool MoeKernelIsGated(std::string_view kernel_name);  // a fused SwiGLU: the up projection

bool HandlesMoe(std::string_view op_name);
std::optional<OpWork> ModelMoe(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
