// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/op_models.h"

#include <vector>

#include "trace/analysis/work_model/attention.h"
#include "trace/analysis/work_model/conv.h"
#include "trace/analysis/work_model/copy.h"
#include "trace/analysis/work_model/elementwise.h"
#include "trace/analysis/work_model/embedding.h"
#include "trace/analysis/work_model/gemm.h"
#include "trace/analysis/work_model/inference_attention.h"
#include "trace/analysis/work_model/moe.h"
#include "trace/analysis/work_model/normalization.h"
#include "trace/analysis/work_model/reduce.h"
#include "trace/analysis/work_model/rms_norm.h"
#include "trace/analysis/work_model/rope.h"
#include "trace/analysis/work_model/softmax.h"

namespace vigil::trace {

std::string_view ComputeSpecName(ComputeSpec spec) {
  switch (spec) {
    case ComputeSpec::kMatrixFp64:
      return "matrix_fp64";
    case ComputeSpec::kMatrixFp32:
      return "matrix_fp32";
    case ComputeSpec::kMatrixTf32:
      return "matrix_tf32";
    case ComputeSpec::kMatrixBf16:
      return "matrix_bf16";
    case ComputeSpec::kMatrixFp16:
      return "matrix_fp16";
    case ComputeSpec::kMatrixFp8:
      return "matrix_fp8";
    case ComputeSpec::kMatrixInt8:
      return "matrix_int8";
    case ComputeSpec::kMatrixFp4:
      return "matrix_fp4";
    case ComputeSpec::kVectorFp64:
      return "vector_fp64";
    case ComputeSpec::kVectorFp32:
      return "vector_fp32";
    case ComputeSpec::kVectorBf16:
      return "vector_bf16";
    case ComputeSpec::kVectorFp16:
      return "vector_fp16";
    case ComputeSpec::kUnknown:
      return "";
  }
  return "";
}

namespace {

// One row per operator family, in the order they are asked. Add a family here and nowhere else.
const std::vector<OpModel>& Rows() {
  static const std::vector<OpModel> rows = {
      {"gemm", HandlesGemm, ModelGemm},
      {"conv", HandlesConv, ModelConv},
      {"attention", HandlesAttention, ModelAttention},
      {"inference_attention", HandlesInferenceAttention, ModelInferenceAttention},
      {"moe", HandlesMoe, ModelMoe},
      {"normalization", HandlesNormalization, ModelNormalization},
      {"rms_norm", HandlesRmsNorm, ModelRmsNorm},
      {"elementwise", HandlesElementwise, ModelElementwise},
      {"copy", HandlesCopy, ModelCopy},
      {"reduce", HandlesReduce, ModelReduce},
      {"softmax", HandlesSoftmax, ModelSoftmax},
      {"embedding", HandlesEmbedding, ModelEmbedding},
      {"rope", HandlesRope, ModelRope},
  };
  return rows;
}

}  // namespace

std::span<const OpModel> AllOpModels() { return Rows(); }

std::optional<OpWork> ModelOperator(std::string_view op_name, const OpInputs& inputs) {
  for (const OpModel& m : Rows()) {
    if (m.handles(op_name)) return m.model(op_name, inputs);
  }
  return std::nullopt;
}

}  // namespace vigil::trace
