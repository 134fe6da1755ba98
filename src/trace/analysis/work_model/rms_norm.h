// SPDX-License-Identifier: Apache-2.0
// Work model of the fused RMSNorm custom operators inference engines record instead of aten ops:
// AITER's (aiter::rms_norm, rmsnorm, rmsnorm2d_fwd_ck, add_rmsnorm, rmsnorm2d_fwd_with_add_ck),
// vLLM's CUDA ops (_C::rms_norm, _C::fused_add_rms_norm) and SGLang's (sgl_kernel::rmsnorm,
// sgl_kernel::fused_add_rmsnorm), and the FP8-quantising variants (aiter::rmsnorm_quant,
// rmsnorm2d_fwd_with_dynamicquant_ck, vLLM's rocm_aiter_rmsnorm[_with_add]_fp8_group_quant).
// TraceLens's RMSNorm formula (171dd747), plus the residual add of the fused-add variants and the
// quantised output as TraceLens's later source counts it. The aten RMS norms are in
// normalization.h.
// Owner: trace. Pure functions; one row in op_models.cc.
#pragma once

#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

bool HandlesRmsNorm(std::string_view op_name);
// Category "RMSNorm_fwd".
std::optional<OpWork> ModelRmsNorm(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
