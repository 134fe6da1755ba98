// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/conv.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/gemm.h"

namespace vigil::trace {
namespace {

using Dims = std::vector<int64_t>;

// Where each forward operator records its arguments (-1: not an argument of that operator).
struct ConvOp {
  std::string_view name;
  int stride = -1, padding = -1, dilation = -1, output_padding = -1, groups = -1;
  int transposed = -1;  // the `transposed` flag's position
  bool always_transposed = false;
  bool count_bias = false;  // the bias input is counted (docs/work-model.md says why not always)
};

constexpr ConvOp kOps[] = {
    // aten::convolution / _convolution (input, weight, bias, stride, padding, dilation,
    // transposed, output_padding, groups, ...). As in TraceLens, the bias is not counted: on
    // cuDNN and MIOpen it is added by a separate elementwise operator.
    {"aten::convolution", 3, 4, 5, 7, 8, 6, false, false},
    {"aten::_convolution", 3, 4, 5, 7, 8, 6, false, false},
    // (input, weight, bias, stride, padding, dilation, groups)
    {"aten::conv1d", 3, 4, 5, -1, 6, -1, false, false},
    {"aten::conv2d", 3, 4, 5, -1, 6, -1, false, false},
    {"aten::conv3d", 3, 4, 5, -1, 6, -1, false, false},
    // (input, weight, bias, stride, padding, output_padding, groups, dilation)
    {"aten::conv_transpose1d", 3, 4, 7, 5, 6, -1, true, false},
    {"aten::conv_transpose2d", 3, 4, 7, 5, 6, -1, true, false},
    {"aten::conv_transpose3d", 3, 4, 7, 5, 6, -1, true, false},
    // (input, weight, padding, stride, dilation, groups, ...): no bias input
    {"aten::cudnn_convolution", 3, 2, 4, -1, 5, -1, false, false},
    // (input, weight, padding, output_padding, stride, dilation, groups, ...)
    {"aten::cudnn_convolution_transpose", 4, 2, 5, 3, 6, -1, true, false},
    // (input, weight, bias, padding, stride, dilation, groups, ...): the bias is fused
    {"aten::miopen_convolution", 4, 3, 5, -1, 6, -1, false, true},
    {"aten::mkldnn_convolution", 4, 3, 5, -1, 6, -1, false, true},
    // (input, weight, bias, padding, output_padding, stride, dilation, groups, ...)
    {"aten::miopen_convolution_transpose", 5, 3, 6, 4, 7, -1, true, true},
};

constexpr std::string_view kBackward = "aten::convolution_backward";

const ConvOp* Find(std::string_view name) {
  for (const ConvOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::string_view ConcreteAt(const OpInputs& in, int i) {
  return i >= 0 && static_cast<size_t>(i) < in.concrete.size() ? std::string_view(in.concrete[i])
                                                               : std::string_view();
}

// "[16, 16]", "(1,1)", "2" or "" (the default), broadcast to `n` spatial dimensions.
bool IntList(std::string_view text, size_t n, int64_t fallback, Dims* out) {
  out->clear();
  std::string digits;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
      digits += c;
    } else if (!digits.empty()) {
      out->push_back(std::strtoll(digits.c_str(), nullptr, 10));
      digits.clear();
    }
  }
  if (!digits.empty()) out->push_back(std::strtoll(digits.c_str(), nullptr, 10));
  if (out->empty()) out->assign(n, fallback);
  if (out->size() == 1) out->assign(n, (*out)[0]);
  return out->size() == n;
}

bool IsTrue(std::string_view s) { return s == "True" || s == "true" || s == "1"; }

// The spatial arguments of a geometry from the concrete inputs at the given positions.
bool Spatial(const OpInputs& in, int stride, int padding, int dilation, int output_padding,
             ConvGeometry* g) {
  size_t n = g->input.size() - 2;
  std::string_view pad = ConcreteAt(in, padding);
  if (pad == "valid") pad = "";
  bool same = pad == "same";
  if (!IntList(ConcreteAt(in, stride), n, 1, &g->stride) ||
      !IntList(same ? "" : pad, n, 0, &g->padding) ||
      !IntList(ConcreteAt(in, dilation), n, 1, &g->dilation) ||
      !IntList(ConcreteAt(in, output_padding), n, 0, &g->output_padding)) {
    return false;
  }
  if (same) {  // PyTorch allows "same" with stride 1 only: padding keeps every size
    for (size_t i = 0; i < n; ++i) g->padding[i] = g->dilation[i] * (g->weight[i + 2] - 1) / 2;
  }
  return true;
}

std::optional<OpWork> Forward(const ConvOp& op, const OpInputs& in) {
  if (in.dims.size() < 2) return std::nullopt;
  ConvGeometry g;
  g.input = in.dims[0];
  g.weight = in.dims[1];
  if (g.input.size() < 3 || g.input.size() > 5 || g.weight.size() != g.input.size()) {
    return std::nullopt;
  }
  g.transposed = op.always_transposed || IsTrue(ConcreteAt(in, op.transposed));
  g.bias = op.count_bias && in.dims.size() > 2 && !in.dims[2].empty();
  if (!Spatial(in, op.stride, op.padding, op.dilation, op.output_padding, &g)) {
    return std::nullopt;
  }
  std::string_view dtype = in.types.empty() ? std::string_view() : in.types[0];
  double bpe = BytesPerElement(dtype);
  if (bpe <= 0 || ConvOutputShape(g).empty()) return std::nullopt;
  return ConvForwardWork(g, bpe, MatrixSpecForDtype(dtype));
}

double Prod(const Dims& d, size_t from = 0) {
  double p = 1;
  for (size_t i = from; i < d.size(); ++i) p *= static_cast<double>(d[i]);
  return p;
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask): the work of each gradient output_mask asks
// for (TraceLens counts all three whatever the mask says).
std::optional<OpWork> Backward(const OpInputs& in) {
  if (in.dims.size() < 3) return std::nullopt;
  const Dims& out = in.dims[0];
  const Dims& x = in.dims[1];
  const Dims& w = in.dims[2];
  if (x.size() < 3 || w.size() != x.size() || out.size() != x.size()) return std::nullopt;
  std::string_view dtype = in.types.size() > 1 ? std::string_view(in.types[1]) : "";
  double bpe = BytesPerElement(dtype);
  if (bpe <= 0) return std::nullopt;
  std::string_view mask_text = ConcreteAt(in, 10);
  bool want[3] = {true, true, true};  // "[True, True, False]"; all three when not recorded
  for (size_t pos = 0, i = 0; pos < mask_text.size() && i < 3; ++pos) {
    if (mask_text.compare(pos, 4, "True") == 0) want[i++] = true;
    if (mask_text.compare(pos, 5, "False") == 0) want[i++] = false;
  }
  bool transposed = IsTrue(ConcreteAt(in, 7));
  // Each product term pairs every output (input, when transposed) element with a filter slice.
  double per_element = 2 * Prod(w, 1);
  double conv_flops = (transposed ? Prod(x) : Prod(out)) * per_element;
  double flops = 0, elems = 0;
  if (want[0]) {  // grad_input: grad_output (*) weight
    flops += conv_flops;
    elems += Prod(out) + Prod(w) + Prod(x);
  }
  if (want[1]) {  // grad_weight: grad_output (*) input
    flops += conv_flops;
    elems += Prod(out) + Prod(x) + Prod(w);
  }
  if (want[2]) {  // grad_bias: a sum of grad_output over all but the channels
    flops += Prod(out);
    elems += Prod(out) + static_cast<double>(out[1]);
  }
  return OpWork{"CONV_bwd", flops, elems * bpe, MatrixSpecForDtype(dtype)};
}

}  // namespace

std::vector<int64_t> ConvOutputShape(const ConvGeometry& g) {
  size_t n = g.input.size() < 2 ? 0 : g.input.size() - 2;
  if (n == 0 || g.weight.size() != g.input.size() || g.stride.size() != n ||
      g.padding.size() != n || g.dilation.size() != n || g.output_padding.size() != n) {
    return {};
  }
  Dims out = {g.input[0], g.transposed ? g.weight[1] : g.weight[0]};
  for (size_t i = 0; i < n; ++i) {
    int64_t in = g.input[i + 2], k = g.weight[i + 2];
    int64_t s = g.stride[i], p = g.padding[i], d = g.dilation[i];
    if (s <= 0) return {};
    int64_t o = g.transposed ? (in - 1) * s - 2 * p + d * (k - 1) + g.output_padding[i] + 1
                             : (in + 2 * p - d * (k - 1) - 1) / s + 1;
    if (o <= 0) return {};
    out.push_back(o);
  }
  return out;
}

OpWork ConvForwardWork(const ConvGeometry& g, double bpe, ComputeSpec spec) {
  Dims out = ConvOutputShape(g);
  double per_element = 2 * Prod(g.weight, 1);
  double flops = (g.transposed ? Prod(g.input) : Prod(out)) * per_element;
  double elems = Prod(g.input) + Prod(g.weight) + Prod(out);
  if (g.bias && out.size() > 1) {
    flops += Prod(out);
    elems += static_cast<double>(out[1]);
  }
  return OpWork{"CONV_fwd", flops, elems * bpe, spec};
}

bool HandlesConv(std::string_view op_name) {
  return op_name == kBackward || Find(op_name) != nullptr;
}

std::optional<OpWork> ModelConv(std::string_view op_name, const OpInputs& inputs) {
  if (op_name == kBackward) return Backward(inputs);
  const ConvOp* op = Find(op_name);
  return op == nullptr ? std::nullopt : Forward(*op, inputs);
}

}  // namespace vigil::trace
