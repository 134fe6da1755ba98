// SPDX-License-Identifier: Apache-2.0
// Work model of the attention family (training and offline inference): PyTorch's
// scaled_dot_product_attention and its flash / memory-efficient / cuDNN kernels, flash-attn's
// operators (fixed and variable length) and AITER's, forward and backward. FLOPs count the two
// matrix products S = Q K^T and O = P V (the softmax is an order of the head size smaller),
// halved for a causal mask over a square score matrix, as TraceLens (171dd747) does; bytes read
// Q, K, V and write O. Paged-KV serving attention is in inference_attention.h.
// Owner: trace. Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "trace/analysis/work_model/op_work.h"

namespace vigil::trace {

// One attention call's sizes: batch, query/key lengths, query/KV heads, head dims.
struct AttentionShape {
  int64_t b = 1, n_q = 0, n_kv = 0, h_q = 0, h_kv = 0, d_qk = 0, d_v = 0;
  bool causal = false;
  bool causal_bottom_right = false;  // the mask is aligned to the last query (flash-attn)
};

// The share of the N_Q x N_KV score matrix the mask keeps: 1 without a causal mask, one half
// for a square matrix (TraceLens's count), the visible pairs' share otherwise.
double CausalShare(const AttentionShape& s);
// 2 * B * H_Q * N_Q * N_KV * (d_qk + d_v), times the causal share of the score matrix.
double AttentionForwardFlops(const AttentionShape& s);
// The backward's matrix products (dV, dP, dQ, dK, plus the recomputed S when `recompute`, as
// flash kernels do) and the GQA reductions of dK and dV over the query heads sharing a KV head.
double AttentionBackwardFlops(const AttentionShape& s, bool recompute);
// Elements read and written: Q, K, V, O forward; Q, K, V, dO, dQ, dK, dV backward.
double AttentionForwardElements(const AttentionShape& s);
double AttentionBackwardElements(const AttentionShape& s);

bool HandlesAttention(std::string_view op_name);
std::optional<OpWork> ModelAttention(std::string_view op_name, const OpInputs& inputs);

}  // namespace vigil::trace
