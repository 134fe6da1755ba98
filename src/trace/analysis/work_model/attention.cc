// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/attention.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/gemm.h"

namespace vigil::trace {
namespace {

using Dims = std::vector<int64_t>;

enum class Layout : uint8_t {
  kBhnd,  // [B, H, N, d]: PyTorch's SDPA operators
  kBnhd,  // [B, N, H, d]: flash-attn, AITER
  kThd,   // [T, H, d]: variable-length batches packed along T, with cumulative lengths
};

enum class Mask : uint8_t {
  kTopLeft,      // PyTorch's is_causal: query i sees keys 0..i
  kBottomRight,  // flash-attn's causal: the last query sees every key
};

struct AttentionOp {
  std::string_view name;
  int q = 0;  // position of Q; K and V follow
  Layout layout = Layout::kBhnd;
  int causal = -1;  // position of the causal flag in the concrete inputs (-1: never causal)
  Mask mask = Mask::kBottomRight;
  bool backward = false;
  bool recompute = true;  // the backward recomputes S (flash kernels)
  int cu_seqlens = -1;    // kThd: position of cu_seqlens_q (cu_seqlens_k follows)
  int max_seqlen = -1;    // kThd: concrete position of max_seqlen_q (max_seqlen_k follows)
};

constexpr AttentionOp kOps[] = {
    {"aten::scaled_dot_product_attention", 0, Layout::kBhnd, 5, Mask::kTopLeft},
    {"aten::_scaled_dot_product_flash_attention", 0, Layout::kBhnd, 4, Mask::kTopLeft},
    {"aten::_scaled_dot_product_flash_attention_for_cpu", 0, Layout::kBhnd, 4, Mask::kTopLeft},
    {"aten::_scaled_dot_product_efficient_attention", 0, Layout::kBhnd, 6, Mask::kTopLeft},
    {"aten::_scaled_dot_product_cudnn_attention", 0, Layout::kBhnd, 6, Mask::kTopLeft},
    // custom_mask_type: 0 none, 1 causal from the top left, 2 from the bottom right
    {"aten::_efficient_attention_forward", 0, Layout::kBnhd, 9, Mask::kTopLeft},
    // the flash and memory-efficient kernels' own operators, under the SDPA ones, [B, N, H, d]
    {"aten::_flash_attention_forward", 0, Layout::kBnhd, 8, Mask::kTopLeft},
    {"aten::_flash_attention_backward", 1, Layout::kBnhd, 11, Mask::kTopLeft, true},
    {"aten::_efficient_attention_backward", 1, Layout::kBnhd, 14, Mask::kTopLeft, true, false},
    {"FlashAttnFunc", 0, Layout::kBnhd, 5},
    {"flash_attn::_flash_attn_forward", 0, Layout::kBnhd, 5},
    {"aiter::_flash_attn_forward", 0, Layout::kBnhd, 5},
    {"aiter::mha_fwd", 0, Layout::kBnhd, 5},
    {"aiter::fmha_v3_fwd", 0, Layout::kBnhd, 5},
    {"aiter::wrapper_fmha_v3_fwd", 1, Layout::kBnhd, 6},
    {"flash_attn_3::fwd", 0, Layout::kBnhd, 24},
    {"flash_attn::_flash_attn_varlen_forward", 0, Layout::kThd, 9, Mask::kBottomRight, false, true,
     3, 5},
    {"aten::_scaled_dot_product_flash_attention_backward", 1, Layout::kBhnd, 11, Mask::kTopLeft,
     true},
    {"aten::_scaled_dot_product_efficient_attention_backward", 1, Layout::kBhnd, 11, Mask::kTopLeft,
     true, false},
    {"aten::_scaled_dot_product_cudnn_attention_backward", 1, Layout::kBhnd, 14, Mask::kTopLeft,
     true},
    {"flash_attn::_flash_attn_backward", 1, Layout::kBnhd, 10, Mask::kBottomRight, true},
    {"aiter::mha_bwd", 1, Layout::kBnhd, 8, Mask::kBottomRight, true},
    {"aiter::wrapper_fmha_v3_bwd", 1, Layout::kBnhd, 9, Mask::kBottomRight, true},
    {"flash_attn::_flash_attn_varlen_backward", 1, Layout::kThd, 15, Mask::kBottomRight, true, true,
     9, 11},
};

const AttentionOp* Find(std::string_view name) {
  for (const AttentionOp& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::string_view ConcreteAt(const OpInputs& in, int i) {
  return i >= 0 && static_cast<size_t>(i) < in.concrete.size() ? std::string_view(in.concrete[i])
                                                               : std::string_view();
}

// The recorded causal flag: "True"/"False", or _efficient_attention_forward's mask type
// (0 none, 1 from the top left, 2 from the bottom right).
bool CausalFlag(std::string_view s, AttentionShape* shape) {
  if (s == "True" || s == "true") return true;
  if (s == "2") shape->causal_bottom_right = true;
  return s == "1" || s == "2";
}

}  // namespace

// The share of the N_Q x N_KV score matrix a causal mask keeps: one half for a square matrix
// (TraceLens's count), the exact count of visible pairs otherwise.
double CausalShare(const AttentionShape& s) {
  if (!s.causal) return 1;
  if (s.n_q == s.n_kv) return 0.5;
  if (s.n_q <= 0 || s.n_kv <= 0) return 0;
  double pairs = 0;
  int64_t offset = s.causal_bottom_right ? s.n_kv - s.n_q : 0;
  for (int64_t i = 0; i < s.n_q; ++i) {  // row i sees keys 0 .. i + offset
    pairs += static_cast<double>(std::clamp<int64_t>(i + offset + 1, 0, s.n_kv));
  }
  return pairs / (static_cast<double>(s.n_q) * static_cast<double>(s.n_kv));
}

namespace {

bool Shape(const Dims& q, const Dims& k, const Dims& v, Layout layout, AttentionShape* s) {
  size_t rank = layout == Layout::kThd ? 3 : 4;
  if (q.size() != rank || k.size() != rank || v.size() != rank) return false;
  // Index of B (absent for kThd), H and N in each layout; d is last.
  int ib = layout == Layout::kThd ? -1 : 0;
  int ih = layout == Layout::kBhnd ? 1 : (layout == Layout::kBnhd ? 2 : 1);
  int in = layout == Layout::kBhnd ? 2 : (layout == Layout::kBnhd ? 1 : 0);
  s->b = ib < 0 ? 1 : q[ib];
  s->h_q = q[ih];
  s->n_q = q[in];
  s->h_kv = k[ih];
  s->n_kv = k[in];
  s->d_qk = q.back();
  s->d_v = v.back();
  return k.back() == s->d_qk && v[ih] == s->h_kv && v[in] == s->n_kv &&
         (ib < 0 || (k[ib] == s->b && v[ib] == s->b));
}

// Variable-length batches record only the packed totals, the number of sequences and the
// longest: the longest sequence plus the rest at their mean length (TraceLens's estimate).
double VarlenFlops(const AttentionOp& op, const OpInputs& in, const AttentionShape& s) {
  int64_t seqs_q = 1, seqs_k = 1;
  size_t cu = static_cast<size_t>(op.cu_seqlens);
  if (cu + 1 < in.dims.size() && in.dims[cu].size() == 1 && in.dims[cu + 1].size() == 1) {
    seqs_q = in.dims[cu][0] - 1;
    seqs_k = in.dims[cu + 1][0] - 1;
  }
  double max_q = std::strtod(std::string(ConcreteAt(in, op.max_seqlen)).c_str(), nullptr);
  double max_k = std::strtod(std::string(ConcreteAt(in, op.max_seqlen + 1)).c_str(), nullptr);
  if (max_q <= 0 || max_k <= 0) {  // not recorded: one sequence
    max_q = static_cast<double>(s.n_q);
    max_k = static_cast<double>(s.n_kv);
    seqs_q = seqs_k = 1;
  }
  auto flops = [&](int64_t n_q, int64_t n_kv) {
    AttentionShape one = s;
    one.n_q = n_q;
    one.n_kv = n_kv;
    return op.backward ? AttentionBackwardFlops(one, op.recompute) : AttentionForwardFlops(one);
  };
  double total = flops(static_cast<int64_t>(max_q), static_cast<int64_t>(max_k));
  if (seqs_q > 1 && seqs_k > 1) {
    int64_t rest_q = static_cast<int64_t>(std::floor((s.n_q - max_q) / (seqs_q - 1)));
    int64_t rest_k = static_cast<int64_t>(std::floor((s.n_kv - max_k) / (seqs_k - 1)));
    total += static_cast<double>(seqs_q - 1) * flops(rest_q, rest_k);
  }
  return total;
}

}  // namespace

double AttentionForwardFlops(const AttentionShape& s) {
  double pairs = static_cast<double>(s.b) * s.h_q * s.n_q * static_cast<double>(s.n_kv);
  double flops = 2 * pairs * static_cast<double>(s.d_qk + s.d_v);
  return flops * CausalShare(s);
}

double AttentionBackwardFlops(const AttentionShape& s, bool recompute) {
  double pairs = static_cast<double>(s.b) * s.h_q * s.n_q * static_cast<double>(s.n_kv);
  double flops = 2 * pairs * static_cast<double>(s.d_v)             // dV = P^T dO
                 + 2 * pairs * static_cast<double>(s.d_v)           // dP = dO V^T
                 + 2 * pairs * static_cast<double>(s.d_qk)          // dQ = dS K
                 + 2 * pairs * static_cast<double>(s.d_qk);         // dK = dS^T Q
  if (recompute) flops += 2 * pairs * static_cast<double>(s.d_qk);  // S = Q K^T again
  int64_t group = s.h_kv > 0 ? s.h_q / s.h_kv - 1 : 0;  // dK, dV summed over shared heads
  flops += static_cast<double>(s.b) * s.n_kv * static_cast<double>(s.d_v + s.d_qk) * group;
  return flops * CausalShare(s);
}

double AttentionForwardElements(const AttentionShape& s) {
  double q = static_cast<double>(s.b) * s.n_q * s.h_q;
  double kv = static_cast<double>(s.b) * s.n_kv * s.h_kv;
  return q * s.d_qk + kv * s.d_qk + kv * s.d_v + q * s.d_v;
}

double AttentionBackwardElements(const AttentionShape& s) {
  double q = static_cast<double>(s.b) * s.n_q * s.h_q;
  double kv = static_cast<double>(s.b) * s.n_kv * s.h_kv;
  // Q, K, V and dO read; dQ, dK, dV written.
  return 2 * (q * s.d_qk + kv * s.d_qk + kv * s.d_v) + q * s.d_v;
}

bool HandlesAttention(std::string_view op_name) { return Find(op_name) != nullptr; }

std::optional<OpWork> ModelAttention(std::string_view op_name, const OpInputs& in) {
  const AttentionOp* op = Find(op_name);
  if (op == nullptr) return std::nullopt;
  size_t q = static_cast<size_t>(op->q);
  if (in.dims.size() < q + 3 || in.types.size() <= q) return std::nullopt;
  AttentionShape s;
  if (!Shape(in.dims[q], in.dims[q + 1], in.dims[q + 2], op->layout, &s)) return std::nullopt;
  s.causal_bottom_right = op->mask == Mask::kBottomRight;
  s.causal = CausalFlag(ConcreteAt(in, op->causal), &s);
  double bpe = BytesPerElement(in.types[q]);
  if (bpe <= 0) return std::nullopt;
  double flops;
  if (op->layout == Layout::kThd) {
    flops = VarlenFlops(*op, in, s);
  } else {
    flops = op->backward ? AttentionBackwardFlops(s, op->recompute) : AttentionForwardFlops(s);
  }
  double elems = op->backward ? AttentionBackwardElements(s) : AttentionForwardElements(s);
  return OpWork{op->backward ? "SDPA_bwd" : "SDPA_fwd", flops, elems * bpe,
                MatrixSpecForDtype(in.types[q])};
}

}  // namespace vigil::trace
