// SPDX-License-Identifier: Apache-2.0
// Work model of the convolution family, forward (aten::convolution, _convolution, conv1d/2d/3d,
// cudnn_convolution, miopen_convolution, their transposed forms) and backward
// (aten::convolution_backward). The forward FLOPs and bytes follow TraceLens (171dd747), which
// follows torch.utils.flop_counter; the backward counts only the gradients the operator's
// output_mask asks for (docs/work-model.md).
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// One convolution's geometry: input [N, C_in, spatial...], weight [C_out, C_in/groups, k...]
// ([C_in, C_out/groups, k...] when transposed), per-dimension stride/padding/dilation.
struct ConvGeometry {
  std::vector<int64_t> input, weight;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  bool bias = false;
};

// The output shape [N, C_out, spatial...]; empty when the geometry is inconsistent.
std::vector<int64_t> ConvOutputShape(const ConvGeometry& g);

// Forward work with every tensor `bpe` bytes per element: 2 * prod(weight[1:]) FLOPs per output
// element (per input element when transposed), plus one per output element for a bias; bytes
// read input, weight, bias (C_out) and write the output.
OpWork ConvForwardWork(const ConvGeometry& g, double bpe, ComputeSpec spec);

bool HandlesConv(std::string_view op_name);
std::optional<OpWork> ModelConv(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
