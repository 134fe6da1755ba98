// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/kernel_category.h"

#include <array>
#include <string>

#include "base/strings.h"

namespace vigil::trace {
namespace {

using K = KernelCategory;

bool Has(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

bool HasAny(std::string_view hay, std::initializer_list<std::string_view> needles) {
  for (std::string_view n : needles) {
    if (Has(hay, n)) return true;
  }
  return false;
}

bool OneOf(std::string_view s, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (s == n) return true;
  }
  return false;
}

// "conv" as a word stem: conv1d, conv_transpose2d, slow_conv3d; not "convert".
bool HasConvStem(std::string_view s) {
  for (size_t at = s.find("conv"); at != std::string_view::npos; at = s.find("conv", at + 1)) {
    const size_t next = at + 4;
    if (next >= s.size() || s[next] == '_' || (s[next] >= '0' && s[next] <= '9')) return true;
  }
  return false;
}

bool IsNormalizationName(std::string_view s) {
  return HasAny(s, {"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm",
                    "group_norm", "groupnorm", "instance_norm", "instancenorm"});
}

bool IsCommOperator(std::string_view full, std::string_view base) {
  for (std::string_view p : {"c10d::", "c10d_functional::", "_c10d_functional::", "nccl:", "rccl:",
                             "gloo:", "mpi:", "ucc:"}) {
    if (full.substr(0, p.size()) == p) return true;
  }
  return base == "record_param_comms" ||
         HasAny(base, {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
                       "all_to_all", "alltoall"});
}

// Operator name lower-cased, without its namespace ("aten::add_" -> "add") and without the
// in-place underscore, so one entry covers add, add_ and aten::add.
std::string BaseName(std::string_view lower) {
  size_t colon = lower.rfind("::");
  std::string_view base = colon == std::string_view::npos ? lower : lower.substr(colon + 2);
  if (base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_') base.remove_suffix(1);
  return std::string(base);
}

}  // namespace

std::string_view KernelCategoryName(KernelCategory c) {
  static constexpr std::array<std::string_view, kKernelCategoryCount> kNames = {
      "gemm",    "attention", "convolution",   "elementwise", "reduction", "normalization",
      "softmax", "embedding", "communication", "memory",      "other"};
  const auto i = static_cast<size_t>(c);
  return i < kNames.size() ? kNames[i] : "other";
}

bool IsCompositeCategory(KernelCategory c) {
  return c == K::kAttention || c == K::kConvolution || c == K::kNormalization || c == K::kSoftmax ||
         c == K::kEmbedding;
}

KernelCategory CategoryFromOperator(std::string_view op_name) {
  const std::string full = ToLower(op_name);
  const std::string base = BaseName(full);
  const std::string_view b = base;
  if (b.empty() || full.rfind("profilerstep#", 0) == 0) return K::kOther;
  // Autograd nodes ("autograd::engine::evaluate_function: AddmmBackward0") name the backward of
  // an operator, not the work: their inner aten operators say what runs.
  if (Has(full, "autograd::engine") || Has(full, "backward0")) return K::kOther;
  if (IsCommOperator(full, b)) return K::kCommunication;
  if (HasAny(b, {"attention", "attn", "sdpa", "fmha", "flash"})) return K::kAttention;
  if (Has(b, "convolution") || HasConvStem(b)) return K::kConvolution;
  if (IsNormalizationName(b)) return K::kNormalization;
  if (Has(b, "softmax")) return K::kSoftmax;
  if (Has(b, "rotary") || Has(b, "_rope") || b.substr(0, 5) == "rope_") return K::kElementwise;
  if (OneOf(b, {"mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "addmv", "mv", "dot",
                "vdot", "_addmm_activation", "_int_mm"}) ||
      HasAny(b, {"gemm", "matmul"}) || (b.size() > 3 && b.substr(b.size() - 3) == "_mm")) {
    return K::kGemm;
  }
  if (Has(b, "embedding")) return K::kEmbedding;
  if (OneOf(b, {"copy",
                "to",
                "_to_copy",
                "_copy_from",
                "_copy_from_and_resize",
                "contiguous",
                "clone",
                "cat",
                "_cat",
                "stack",
                "index_select",
                "gather",
                "scatter",
                "scatter_add",
                "index",
                "index_put",
                "_index_put_impl",
                "index_copy",
                "take",
                "narrow_copy",
                "repeat",
                "repeat_interleave",
                "flip",
                "roll",
                "constant_pad_nd",
                "_local_scalar_dense",
                "item"}) ||
      HasAny(b, {"kv_cache", "kvcache", "reshape_and_cache"})) {
    return K::kMemory;
  }
  if (OneOf(b, {"sum",
                "mean",
                "amax",
                "amin",
                "aminmax",
                "max",
                "min",
                "argmax",
                "argmin",
                "prod",
                "norm",
                "linalg_vector_norm",
                "frobenius_norm",
                "var",
                "std",
                "var_mean",
                "std_mean",
                "all",
                "any",
                "logsumexp",
                "cumsum",
                "cumprod",
                "nansum",
                "count_nonzero",
                "_foreach_norm"})) {
    return K::kReduction;
  }
  if (OneOf(b, {"add",
                "sub",
                "rsub",
                "mul",
                "div",
                "neg",
                "pow",
                "rsqrt",
                "sqrt",
                "exp",
                "log",
                "sigmoid",
                "tanh",
                "relu",
                "gelu",
                "silu",
                "gelu_backward",
                "silu_backward",
                "threshold_backward",
                "sigmoid_backward",
                "tanh_backward",
                "where",
                "clamp",
                "clamp_min",
                "clamp_max",
                "masked_fill",
                "dropout",
                "native_dropout",
                "native_dropout_backward",
                "addcmul",
                "addcdiv",
                "lerp",
                "eq",
                "ne",
                "lt",
                "le",
                "gt",
                "ge",
                "abs",
                "sin",
                "cos",
                "reciprocal",
                "erf",
                "hardtanh",
                "leaky_relu",
                "elu",
                "softplus",
                "mish",
                "fill",
                "zero",
                "sign",
                "floor",
                "ceil",
                "round",
                "trunc",
                "maximum",
                "minimum",
                "logical_and",
                "logical_or",
                "logical_not",
                "tril",
                "triu",
                "square",
                "remainder",
                "fmod",
                "nan_to_num",
                "_fused_adam",
                "_fused_adamw",
                "_fused_sgd"}) ||
      b.substr(0, 9) == "_foreach_" || b.substr(0, 8) == "bitwise_") {
    return K::kElementwise;
  }
  return K::kOther;
}

KernelCategory CategoryFromKernelName(std::string_view kernel_name, EventKind kind,
                                      const KernelClassifier& classifier) {
  if (kind == EventKind::kMemcpy || kind == EventKind::kMemset) return K::kMemory;
  const KernelClass cls = classifier.Classify(kernel_name, kind);
  if (cls == KernelClass::kComm) return K::kCommunication;
  if (cls == KernelClass::kMemory) return K::kMemory;
  const std::string lower = ToLower(kernel_name);
  const std::string_view n = lower;
  if (HasAny(n, {"attention", "attn", "fmha", "flash_fwd", "flash_bwd", "flash::", "pytorch_flash",
                 "mha_fwd", "mha_bwd", "sdpa"})) {
    return K::kAttention;
  }
  if (HasAny(n, {"implicit_gemm", "implicitgemm", "implicit_convolve",
                 "convolve",      "convolution",  "conv1d",
                 "conv2d",        "conv3d",       "fprop",
                 "dgrad",         "wgrad",        "winograd",
                 "igemm_fwd",     "igemm_bwd",    "igemm_wrw",
                 "miopenconv",    "naive_conv",   "im2col",
                 "col2im",        "depthwise"})) {
    return K::kConvolution;
  }
  if (IsNormalizationName(n) || HasAny(n, {"bn_fw", "bn_bw", "ln_fwd", "ln_bwd"})) {
    return K::kNormalization;
  }
  if (Has(n, "softmax")) return K::kSoftmax;
  if (HasAny(n,
             {"gemm", "gemv", "nvjet", "cublas", "cutlass", "matmul", "wvsplitk", "triton_tem_"}) ||
      n.substr(0, 5) == "cijk_") {
    return K::kGemm;
  }
  if (Has(n, "rotary")) return K::kElementwise;
  if (Has(n, "embedding")) return K::kEmbedding;
  if (HasAny(n, {"copy", "reshape_and_cache", "store_kvcache", "kv_cache", "gather", "scatter",
                 "index_select", "indexselect", "index_elementwise", "indexing_backward"})) {
    return K::kMemory;
  }
  if (HasAny(n, {"reduce", "reduction", "triton_red_", "triton_per_", "argmax", "argmin", "cumsum",
                 "scan"})) {
    return K::kReduction;
  }
  if (HasAny(n, {"elementwise", "triton_poi_", "multi_tensor_apply", "act_and_mul", "silu", "gelu",
                 "relu", "activation", "dropout", "fill", "unary", "binary", "pointwise"})) {
    return K::kElementwise;
  }
  return K::kOther;
}

KernelCategory KernelCategorizer::OfOperator(uint32_t op_row) {
  if (op_row == kNoIndex) return K::kOther;
  const uint32_t name = trace_.events.name[op_row];
  auto [it, inserted] = op_memo_.try_emplace(name, K::kOther);
  if (inserted) it->second = CategoryFromOperator(trace_.strings.Get(name));
  return it->second;
}

KernelCategory KernelCategorizer::Categorize(uint32_t gpu_row, uint32_t op_row) {
  const EventTable& e = trace_.events;
  const uint64_t key = uint64_t{e.name[gpu_row]} << 8 | static_cast<uint8_t>(e.kind[gpu_row]);
  auto [it, inserted] = kernel_memo_.try_emplace(key, K::kOther);
  if (inserted) {
    it->second =
        CategoryFromKernelName(trace_.strings.Get(e.name[gpu_row]), e.kind[gpu_row], classifier_);
  }
  const KernelCategory by_name = it->second;
  // What the kernel's name settles whatever launched it.
  if (by_name == K::kCommunication || e.kind[gpu_row] != EventKind::kKernel) return by_name;
  const KernelCategory own = OfOperator(op_row);
  if (IsCompositeCategory(own) || own == K::kGemm || own == K::kCommunication) return own;
  // A generic or unknown operator inside a composite one (the index_select of an embedding).
  if (op_row != kNoIndex) {
    for (uint32_t r = trace_.links.parent[op_row]; r != kNoIndex; r = trace_.links.parent[r]) {
      if (e.kind[r] != EventKind::kCpuOp) continue;
      const KernelCategory outer = OfOperator(r);
      if (IsCompositeCategory(outer)) return outer;
    }
  }
  return own != K::kOther ? own : by_name;
}

KernelCategory CategorizeKernel(const RankTrace& trace, uint32_t gpu_row, uint32_t op_row) {
  static const KernelClassifier kDefault = KernelClassifier::Default();
  KernelCategorizer c(kDefault, trace);
  return c.Categorize(gpu_row, op_row);
}

}  // namespace vigil::trace
