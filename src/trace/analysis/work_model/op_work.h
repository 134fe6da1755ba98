// SPDX-License-Identifier: Apache-2.0
// The per-operator work model's value types: an operator's recorded inputs (what PyTorch writes
// with record_shapes=True: `Input Dims`, `Input type`, `Input Strides`, `Concrete Inputs`) and the
// work it does (floating-point operations and bytes moved), with the peak it should be held to.
// Why a model at all: a kernel's % of roofline needs the work of the operator that launched it,
// and traces carry shapes, not FLOP counts (with_flops covers only a few operators).
// Owner: trace. Plain value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vigil::trace {

// One operator's inputs, position by position (the four lists have one entry per input; an input
// that is not a tensor has empty dims/strides; `concrete` holds the text of a scalar argument, ""
// for tensors).
struct OpInputs {
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types;  // "float", "c10::BFloat16", "c10::Half", "Scalar", "", ...
  std::vector<std::vector<int64_t>> strides;
  std::vector<std::string> concrete;
};

// The peak an operator's work is held to (TraceLens's `Compute Spec`).
enum class ComputeSpec : uint8_t {
  kMatrixFp64,
  kMatrixFp32,  // TF32 tensor cores where the device has them
  kMatrixTf32,
  kMatrixBf16,
  kMatrixFp16,
  kMatrixFp8,
  kMatrixInt8,
  kMatrixFp4,
  kVectorFp64,
  kVectorFp32,
  kVectorBf16,
  kVectorFp16,
  kUnknown,  // the dtype has no peak in the model (TraceLens leaves the column empty)
};
// "matrix_bf16", "vector_fp32", ...: TraceLens's names ("" for kUnknown).
std::string_view ComputeSpecName(ComputeSpec spec);

struct OpWork {
  std::string_view category;  // TraceLens's category: "GEMM", "CONV_fwd", "SDPA_fwd", ...
  double flops = 0;           // floating-point operations (a multiply-add counts 2)
  double bytes = 0;           // bytes read and written
  ComputeSpec spec = ComputeSpec::kVectorFp32;
};

}  // namespace vigil::trace
