// SPDX-License-Identifier: Apache-2.0
// Work model of the GEMM family: aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm,
// _grouped_mm and the vendor GEMM operators of serving stacks (vLLM, AITER, SGLang) that take
// x[M, K] and a weight w[N, K]. FLOPs and bytes follow TraceLens (171dd747) where it models the
// operator; the rest is in docs/work-model.md. Also the dtype -> matrix-peak mapping every
// matrix family (convolution, attention, MoE) shares.
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// The matrix-unit peak for an operand dtype: "c10::BFloat16" -> kMatrixBf16, "float" ->
// kMatrixFp32, "c10::Float8_e4m3fn" / "unsigned char" -> kMatrixFp8, "FP4" -> kMatrixFp4,
// "signed char" -> kMatrixInt8; kUnknown for a dtype with no matrix peak.
ComputeSpec MatrixSpecForDtype(std::string_view dtype);

// Bytes per element as the matrix families count them: BytesPerElement, plus the packed
// quantised formats serving stacks name in kernels ("FP4" = 0.5, "FP8" = 1); -1 when unknown.
double MatrixBytesPerElement(std::string_view dtype);

// The work of `b` independent products (m x k) @ (k x n) -> (m x n), each plus a bias of n
// elements when `bias` (n*m additions): 2*m*n*k (+ m*n) FLOPs and
// (m*k*bpe_a + k*n*bpe_b + m*n*bpe_out + n*bpe_bias) bytes, times b.
OpWork GemmWork(int64_t b, int64_t m, int64_t n, int64_t k, bool bias, double bpe_a, double bpe_b,
                double bpe_bias, double bpe_out, ComputeSpec spec);

bool HandlesGemm(std::string_view op_name);
std::optional<OpWork> ModelGemm(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
