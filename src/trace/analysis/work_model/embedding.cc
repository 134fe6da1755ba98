// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/embedding.h"

#include <vector>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/vector_operands.h"

namespace vigil::trace {
namespace {

// `rows` rows of `row_elems` elements gathered from a table of `table_type` by an index tensor of
// `index_elems` elements.
OpWork Gather(double rows, double row_elems, int bpe, double index_elems, int index_bpe,
              std::string_view table_type) {
  OpWork work;
  work.category = "Embedding_fwd";
  work.spec = VectorSpec(table_type);
  work.flops = 0;
  work.bytes = index_elems * index_bpe + 2 * rows * row_elems * bpe;
  return work;
}

std::optional<OpWork> Embedding(const OpInputs& in) {
  const std::vector<int64_t>& weight = InputDims(in, 0);
  if (weight.size() != 2 || in.dims.size() < 2) return std::nullopt;
  std::optional<int> bpe = OperandBytes(InputType(in, 0));
  std::optional<int> index_bpe = OperandBytes(InputType(in, 1));
  if (!bpe || !index_bpe) return std::nullopt;
  double indices = double(Numel(in.dims[1]));
  return Gather(indices, double(weight[1]), *bpe, indices, *index_bpe, InputType(in, 0));
}

std::optional<OpWork> IndexSelect(const OpInputs& in) {
  const std::vector<int64_t>& self = InputDims(in, 0);
  std::optional<double> dim = ParseNumber(InputConcrete(in, 1));
  if (self.empty() || in.dims.size() < 3 || !dim) return std::nullopt;
  int64_t d = int64_t(*dim);
  if (d < 0) d += int64_t(self.size());
  if (d < 0 || d >= int64_t(self.size()) || self[size_t(d)] <= 0) return std::nullopt;
  std::optional<int> bpe = OperandBytes(InputType(in, 0));
  std::optional<int> index_bpe = OperandBytes(InputType(in, 2));
  if (!bpe || !index_bpe) return std::nullopt;
  double indices = double(Numel(in.dims[2]));
  double slice = double(Numel(self)) / double(self[size_t(d)]);  // elements per selected index
  return Gather(indices, slice, *bpe, indices, *index_bpe, InputType(in, 0));
}

// (grad_output [..., D], indices, num_weights, padding_idx, scale_grad_by_freq).
std::optional<OpWork> EmbeddingBackward(const OpInputs& in) {
  const std::vector<int64_t>& grad = InputDims(in, 0);
  std::optional<double> num_weights = ParseNumber(InputConcrete(in, 2));
  if (grad.empty() || in.dims.size() < 2 || !num_weights) return std::nullopt;
  std::optional<int> bpe = OperandBytes(InputType(in, 0));
  std::optional<int> index_bpe = OperandBytes(InputType(in, 1));
  if (!bpe || !index_bpe) return std::nullopt;
  double n = double(Numel(grad));
  OpWork work;
  work.category = "Embedding_bwd";
  work.spec = VectorSpec(InputType(in, 0));
  work.flops = n;
  work.bytes =
      n * *bpe + double(Numel(in.dims[1])) * *index_bpe + *num_weights * double(grad.back()) * *bpe;
  return work;
}

}  // namespace

bool HandlesEmbedding(std::string_view op_name) {
  return op_name == "aten::embedding" || op_name == "aten::index_select" ||
         op_name == "aten::embedding_dense_backward";
}

std::optional<OpWork> ModelEmbedding(std::string_view op_name, const OpInputs& inputs) {
  if (op_name == "aten::embedding") return Embedding(inputs);
  if (op_name == "aten::index_select") return IndexSelect(inputs);
  if (op_name == "aten::embedding_dense_backward") return EmbeddingBackward(inputs);
  return std::nullopt;
}

}  // namespace vigil::trace
