// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/work_model/inference_attention.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "trace/analysis/work_model/dtypes.h"
#include "trace/analysis/work_model/gemm.h"

namespace vigil::trace {
namespace {

using Dims = std::vector<int64_t>;

// Where an operator records Q, K, V (K and V are [..., N_KV, H_KV, d] or paged
// [pages, page_size, H_KV, d]) and the dtypes of Q and of the cache.
struct PagedOp {
  std::string_view name;
  int q = 0, k = 1, v = 2;
  int kv_type = -1;         // position of the KV-cache dtype (-1: the cache has Q's dtype)
  bool d_v_from_k = false;  // TraceLens takes d_v from K's last dimension for these operators
};

constexpr PagedOp kOps[] = {
    {"vllm::unified_attention_with_output", 0, 1, 2, 1, true},
    {"vllm::unified_mla_attention_with_output", 0, 1, 2, 1, true},
    {"aiter::mha_varlen_fwd", 0, 1, 2, 1, true},
    {"aiter::fmha_v3_varlen_fwd", 0, 1, 2, 1, false},
    {"aiter::mha_batch_prefill", 0, 1, 2, 1, false},
    // (out, workspace, query, key_cache, value_cache, ...): SGLang's profiler name for AITER's
    // paged_attention_ragged, with a per-layer "_<index>" suffix
    {"sglang_profiler::attention_paged_attention_ragged", 2, 3, 4, -1, false},
};

constexpr std::string_view kStoreCache = "sglang::store_cache";
// (key, value, key_cache, value_cache, slot_mapping, ...) and vLLM's wrapper (key, value, layer)
constexpr std::string_view kReshapeAndCache = "_C_cache_ops::reshape_and_cache_flash";
constexpr std::string_view kKvCacheUpdate = "vllm::unified_kv_cache_update";

// "sglang_profiler::attention_paged_attention_ragged_12" -> "..._ragged": SGLang's profiler
// numbers each layer's operator.
std::string_view BaseName(std::string_view name) {
  if (name.rfind("sglang_profiler::", 0) != 0) return name;
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  if (end < name.size() && end > 0 && name[end - 1] == '_') return name.substr(0, end - 1);
  return name;
}

const PagedOp* Find(std::string_view name) {
  std::string_view base = BaseName(name);
  for (const PagedOp& op : kOps) {
    if (op.name == base) return &op;
  }
  return nullptr;
}

std::string_view TypeAt(const OpInputs& in, int i) {
  return i >= 0 && static_cast<size_t>(i) < in.types.size() ? std::string_view(in.types[i])
                                                            : std::string_view();
}

double Number(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? 0 : std::strtod(it->second.c_str(), nullptr);
}

std::map<std::string, std::string> KeyValues(const std::string& body) {
  static const std::regex kPair(R"((\w+)=(\d+))");
  std::map<std::string, std::string> kv;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), kPair);
       it != std::sregex_iterator(); ++it) {
    kv[(*it)[1].str()] = (*it)[2].str();
  }
  return kv;
}

// The vector-unit peak for a memory-only operator's dtype (TraceLens's `vector_<dtype>`).
ComputeSpec VectorSpec(std::string_view dtype) {
  if (dtype == "c10::BFloat16") return ComputeSpec::kVectorBf16;
  if (dtype == "c10::Half") return ComputeSpec::kVectorFp16;
  if (dtype == "double") return ComputeSpec::kVectorFp64;
  if (dtype == "float") return ComputeSpec::kVectorFp32;
  return ComputeSpec::kUnknown;
}

// sglang::store_cache(k, v, k_cache, v_cache, loc, ...): k and v rows copied into the cache, so
// k and v are read and as many cache rows written.
std::optional<OpWork> StoreCache(const OpInputs& in) {
  if (in.dims.empty()) return std::nullopt;
  double bpe = BytesPerElement(TypeAt(in, 0));
  if (bpe <= 0) bpe = 2;
  return OpWork{"InferenceAttention_fwd", 0, 4 * static_cast<double>(Numel(in.dims[0])) * bpe,
                VectorSpec(TypeAt(in, 0))};
}

// vLLM's KV-cache write: key and value read, as many elements written in the cache's dtype
// (the cache is input 2 where recorded; vLLM's wrapper does not record it: key's dtype).
std::optional<OpWork> CacheWrite(const OpInputs& in) {
  if (in.dims.size() < 2) return std::nullopt;
  double bpe = BytesPerElement(TypeAt(in, 0));
  if (bpe <= 0) return std::nullopt;
  double cache_bpe = BytesPerElement(TypeAt(in, 2));
  if (cache_bpe <= 0) cache_bpe = bpe;
  double elems = static_cast<double>(Numel(in.dims[0]) + Numel(in.dims[1]));
  return OpWork{"InferenceAttention_fwd", 0, elems * (bpe + cache_bpe), VectorSpec(TypeAt(in, 0))};
}

}  // namespace

std::optional<ServingStep> ParseServingStep(std::string_view annotation) {
  std::string text(annotation);
  static const std::regex kVllm(
      R"(execute_\d+_context_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)_generation_\d+\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\).*)");
  static const std::regex kSglangDetailed(
      R"(step\[(EXTEND|DECODE|MIXED)\b[^\]]*sqsq=\d+[^\]]*\].*)");
  static const std::regex kSglangNative(R"(step\[(\w+)\s+bs=(\d+)(?:\s+toks=(\d+))?\].*)");
  static const std::regex kAtom(R"((prefill|decode)\[(.*sqsq=\d+.*)\].*)");
  std::smatch m;
  ServingStep s;
  if (std::regex_match(text, m, kVllm)) {
    double v[8];
    for (int i = 0; i < 8; ++i) v[i] = std::strtod(m[i + 1].str().c_str(), nullptr);
    s = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], true};
    return s;
  }
  if (std::regex_match(text, m, kSglangDetailed)) {
    auto kv = KeyValues(text.substr(text.find('[')));
    s.c_sq = Number(kv, "c_sq"), s.c_sk = Number(kv, "c_sk");
    s.c_sqsq = Number(kv, "c_sqsq"), s.c_sqsk = Number(kv, "c_sqsk");
    s.g_sq = Number(kv, "g_sq"), s.g_sk = Number(kv, "g_sk");
    s.g_sqsq = Number(kv, "g_sqsq"), s.g_sqsk = Number(kv, "g_sqsk");
    return s;
  }
  if (std::regex_match(text, m, kSglangNative)) {
    double bs = std::strtod(m[2].str().c_str(), nullptr);
    double toks = m[3].matched ? std::strtod(m[3].str().c_str(), nullptr) : 0;
    if (m[1].str() == "DECODE") {
      s.g_sq = bs;
      s.kv_known = false;
      return s;
    }
    if (bs <= 0 || toks <= 0) return std::nullopt;
    // Prompts processed from scratch: each attends causally to itself.
    s.c_sq = s.c_sk = toks;
    s.c_sqsq = s.c_sqsk = toks * toks / bs;
    return s;
  }
  if (std::regex_match(text, m, kAtom)) {
    auto kv = KeyValues(m[2].str());
    double tok = Number(kv, "tok"), sk = Number(kv, "sk");
    double sqsq = Number(kv, "sqsq"), sqsk = Number(kv, "sqsk");
    if (m[1].str() == "prefill") {
      s.c_sq = tok, s.c_sk = sk, s.c_sqsq = sqsq, s.c_sqsk = sqsk;
    } else {
      s.g_sq = tok, s.g_sk = sk, s.g_sqsq = sqsq, s.g_sqsk = sqsk;
    }
    return s;
  }
  return std::nullopt;
}

bool HandlesInferenceAttention(std::string_view op_name) {
  return op_name == kStoreCache || op_name == kReshapeAndCache || op_name == kKvCacheUpdate ||
         Find(op_name) != nullptr;
}

std::optional<OpWork> ModelInferenceAttention(std::string_view op_name, const OpInputs& in) {
  if (op_name == kStoreCache) return StoreCache(in);
  if (op_name == kReshapeAndCache || op_name == kKvCacheUpdate) return CacheWrite(in);
  const PagedOp* op = Find(op_name);
  if (op == nullptr || !in.step.has_value() || !in.step->kv_known) return std::nullopt;
  const ServingStep& st = *in.step;
  if (st.c_sq == 0 && st.g_sq == 0) return std::nullopt;
  size_t iq = static_cast<size_t>(op->q), ik = static_cast<size_t>(op->k);
  size_t iv = static_cast<size_t>(op->v);
  if (in.dims.size() <= std::max(ik, iv) || in.dims[iq].size() != 3 || in.dims[ik].size() < 3 ||
      in.dims[iv].empty()) {
    return std::nullopt;
  }
  const Dims& q = in.dims[iq];
  const Dims& k = in.dims[ik];
  double h_q = static_cast<double>(q[1]), d_qk = static_cast<double>(q[2]);
  double h_kv = static_cast<double>(k[k.size() - 2]);
  double d_v = static_cast<double>(op->d_v_from_k ? k.back() : in.dims[iv].back());
  // Within a prefill chunk attention is causal: sqsk pairs less half the sq^2 block.
  double flops =
      h_q * (2 * st.c_sqsk - st.c_sqsq) * (d_qk + d_v) + h_q * 2 * st.g_sqsk * (d_qk + d_v);
  std::string_view q_type = TypeAt(in, op->q);
  double bpe = BytesPerElement(q_type);
  if (bpe <= 0) bpe = 2;
  double bpe_kv = op->kv_type < 0 ? bpe : BytesPerElement(TypeAt(in, op->kv_type));
  if (bpe_kv <= 0) bpe_kv = bpe;
  // New tokens: Q read, O written, their own K and V read; cached tokens: K and V read.
  double per_new = h_q * d_qk + h_q * d_v + h_kv * d_qk + h_kv * d_v;
  double per_cached = h_kv * (d_qk + d_v);
  double bytes = (st.c_sq + st.g_sq) * per_new * bpe +
                 ((st.c_sk - st.c_sq) + (st.g_sk - st.g_sq)) * per_cached * bpe_kv;
  return OpWork{"InferenceAttention_fwd", flops, bytes, MatrixSpecForDtype(q_type)};
}

}  // namespace vigil::trace
