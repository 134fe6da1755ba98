// SPDX-License-Identifier: Apache-2.0
// What kind of work a GPU kernel does (GEMM, attention, convolution, ...), the one vocabulary the
// operator breakdown, the per-category GPU time, the cross-vendor diff and the roofline work
// model share. A kernel is categorised from the operator that launched it when that operator's
// name says what it computes (aten::addmm is a GEMM whatever cuBLAS or hipBLASLt names its
// kernel), otherwise from the kernel's own name (NVIDIA and AMD libraries, Triton, NCCL/RCCL).
// Copies and memsets are always memory, collective kernels always communication.
// Owner: trace. Pure functions; KernelCategorizer is one per trace and thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "trace/analysis/kernel_classifier.h"
#include "trace/model/trace_model.h"

namespace vigil::trace {

enum class KernelCategory : uint8_t {
  kGemm = 0,
  kAttention,
  kConvolution,
  kElementwise,
  kReduction,
  kNormalization,
  kSoftmax,    // softmax / log-softmax outside a fused attention kernel
  kEmbedding,  // embedding lookups and their backward (gathers the work model sizes by rows)
  kCommunication,
  kMemory,  // memcpy, memset and copy/cast/concatenate/gather kernels
  kOther,
};
inline constexpr int kKernelCategoryCount = static_cast<int>(KernelCategory::kOther) + 1;

// "gemm", "attention", "convolution", "elementwise", "reduction", "normalization", "softmax",
// "embedding", "communication", "memory", "other".
std::string_view KernelCategoryName(KernelCategory c);

// The category an operator's name implies ("aten::addmm" -> kGemm), kOther when the name says
// nothing about the work (aten::view, a Python-level annotation, an unknown custom op).
KernelCategory CategoryFromOperator(std::string_view op_name);

// True for operators whose kernels all belong to the operator's algorithm, so a generic kernel
// they launch through an inner operator (the index_select of aten::embedding, the bmm/softmax of
// the math path of scaled_dot_product_attention) takes the outer operator's category.
bool IsCompositeCategory(KernelCategory c);

// The category a kernel's name implies, for kernels whose operator is unknown or says nothing.
// `classifier` decides communication and memory (so --kernel-patterns rules apply here too).
KernelCategory CategoryFromKernelName(std::string_view kernel_name, EventKind kind,
                                      const KernelClassifier& classifier);

// The category of GPU row `gpu_row`, launched by CPU operator row `op_row` (kNoIndex when no
// operator encloses the launch). Uses KernelClassifier::Default() for communication/memory.
KernelCategory CategorizeKernel(const RankTrace& trace, uint32_t gpu_row, uint32_t op_row);

// CategorizeKernel with a given classifier and the name lookups remembered per (kernel name,
// operator name): traces repeat a few hundred names tens of thousands of times.
class KernelCategorizer {
 public:
  KernelCategorizer(const KernelClassifier& classifier, const RankTrace& trace)
      : classifier_(classifier), trace_(trace) {}
  // A generic or unknown `op_row` takes the category of its nearest composite enclosing
  // operator (see IsCompositeCategory), found through the trace's parent links.
  KernelCategory Categorize(uint32_t gpu_row, uint32_t op_row);
  KernelCategory OfOperator(uint32_t op_row);  // kOther for kNoIndex

 private:
  const KernelClassifier& classifier_;
  const RankTrace& trace_;
  std::unordered_map<uint64_t, KernelCategory> kernel_memo_;  // (name id, kind)
  std::unordered_map<uint32_t, KernelCategory> op_memo_;      // operator name id
};

}  // namespace vigil::trace
