// SPDX-License-Identifier: Apache-2.0
// Kernel categories: operator names, NVIDIA and AMD kernel names (taken from the shared traces),
// and the row-level rule that prefers the launching operator.
#include "trace/analysis/kernel_category.h"

#include <gtest/gtest.h>

#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using K = KernelCategory;

TEST(KernelCategoryTest, NamesAreStable) {
  EXPECT_EQ(KernelCategoryName(K::kGemm), "gemm");
  EXPECT_EQ(KernelCategoryName(K::kAttention), "attention");
  EXPECT_EQ(KernelCategoryName(K::kNormalization), "normalization");
  EXPECT_EQ(KernelCategoryName(K::kCommunication), "communication");
  EXPECT_EQ(KernelCategoryName(K::kOther), "other");
  for (int c = 0; c < kKernelCategoryCount; ++c) {
    EXPECT_FALSE(KernelCategoryName(static_cast<K>(c)).empty());
  }
}

TEST(KernelCategoryTest, FromOperator) {
  const std::pair<const char*, K> cases[] = {
      {"aten::mm", K::kGemm},
      {"aten::addmm", K::kGemm},
      {"aten::linear", K::kGemm},
      {"aten::bmm", K::kGemm},
      {"aten::_scaled_mm", K::kGemm},
      {"_C::cutlass_scaled_mm", K::kGemm},
      {"aten::scaled_dot_product_attention", K::kAttention},
      {"aten::_flash_attention_forward", K::kAttention},
      {"aten::_scaled_dot_product_efficient_attention_backward", K::kAttention},
      {"vllm::unified_attention_with_output", K::kAttention},
      {"aten::convolution", K::kConvolution},
      {"aten::cudnn_convolution", K::kConvolution},
      {"aten::conv2d", K::kConvolution},
      {"aten::convolution_backward", K::kConvolution},
      {"aten::layer_norm", K::kNormalization},
      {"aten::native_layer_norm_backward", K::kNormalization},
      {"aten::rms_norm", K::kNormalization},
      {"_C::fused_add_rms_norm", K::kNormalization},
      {"aten::cudnn_batch_norm", K::kNormalization},
      {"aten::_softmax", K::kSoftmax},
      {"aten::embedding", K::kEmbedding},
      {"aten::embedding_dense_backward", K::kEmbedding},
      {"_C::rotary_embedding", K::kElementwise},
      {"aten::sum", K::kReduction},
      {"aten::mean", K::kReduction},
      {"aten::amax", K::kReduction},
      {"aten::norm", K::kReduction},
      {"aten::add", K::kElementwise},
      {"aten::add_", K::kElementwise},
      {"aten::mul", K::kElementwise},
      {"aten::gelu", K::kElementwise},
      {"aten::_foreach_add_", K::kElementwise},
      {"aten::copy_", K::kMemory},
      {"aten::to", K::kMemory},
      {"aten::_to_copy", K::kMemory},
      {"aten::cat", K::kMemory},
      {"record_param_comms", K::kCommunication},
      {"c10d::allreduce_", K::kCommunication},
      {"nccl:all_reduce", K::kCommunication},
      {"gloo:all_reduce", K::kCommunication},
      {"aten::view", K::kOther},
      {"aten::_convert_indices_from_coo_to_csr", K::kOther},
      {"autograd::engine::evaluate_function: AddmmBackward0", K::kOther},
      {"ProfilerStep#3", K::kOther},
      {"", K::kOther},
  };
  for (const auto& [op, want] : cases) {
    EXPECT_EQ(KernelCategoryName(CategoryFromOperator(op)), KernelCategoryName(want)) << op;
  }
}

TEST(KernelCategoryTest, FromKernelNameNvidiaAndAmd) {
  const KernelClassifier c = KernelClassifier::Default();
  const std::pair<const char*, K> cases[] = {
      // NVIDIA: cuBLAS, cutlass, nvjet, cuDNN, flash attention, ATen.
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       K::kGemm},
      {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_"
       "align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
       K::kGemm},
      {"nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", K::kGemm},
      {"volta_sgemm_128x64_nn", K::kGemm},
      {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float>(cublasLt::cublasSplitKParams<"
       "float>, float const*, float*, float const*, float const*, float const*)",
       K::kGemm},
      {"sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32",
       K::kConvolution},
      {"void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false>",
       K::kConvolution},
      {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, "
       "4, false, false, cutlass::bfloat16_t>>(pytorch_flash::Flash_fwd_params)",
       K::kAttention},
      {"fmha_cutlassF_f16_aligned_64x64_rf_sm80", K::kAttention},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>",
       K::kNormalization},
      {"void at::native::batch_norm_collect_statistics_kernel<at::native::Var, float, float>",
       K::kNormalization},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>",
       K::kSoftmax},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::"
       "BFloat16>, std::array<char*, 3ul> >",
       K::kElementwise},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<"
       "float, float, float, float>, unsigned int, float, 4, 4> >",
       K::kReduction},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::bfloat16_copy_kernel_cuda("
       "at::TensorIteratorBase&)>",
       K::kMemory},
      {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4>",
       K::kMemory},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       K::kCommunication},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", K::kCommunication},
      {"triton_poi_fused_add_mul_0", K::kElementwise},
      {"triton_red_fused_sum_1", K::kReduction},
      {"triton_per_fused__softmax_2", K::kSoftmax},
      // AMD: hipBLASLt/Tensile, CK, aiter, MIOpen, RCCL, vLLM/SGLang on ROCm.
      {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC1",
       K::kGemm},
      {"_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassE",
       K::kNormalization},
      {"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi64ELi8ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_",
       K::kNormalization},
      {"attn_fwd", K::kAttention},
      {"kernel_unified_attention_2d", K::kAttention},
      {"void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128>",
       K::kAttention},
      {"igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt256x128x32_wt32x32x8_ws2x1_wt2x2", K::kConvolution},
      {"MIOpenBatchNormFwdTrainSpatial", K::kNormalization},
      {"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)", K::kElementwise},
      {"void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16>", K::kMemory},
      {"_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16E", K::kElementwise},
      {"_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu", K::kGemm},
      {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long>",
       K::kMemory},
      {"rcclGenericKernel<1, false>", K::kCommunication},
      {"_combined_routing_compute", K::kOther},
  };
  for (const auto& [name, want] : cases) {
    EXPECT_EQ(KernelCategoryName(CategoryFromKernelName(name, EventKind::kKernel, c)),
              KernelCategoryName(want))
        << name;
  }
  EXPECT_EQ(CategoryFromKernelName("Memcpy HtoD (Pageable -> Device)", EventKind::kMemcpy, c),
            K::kMemory);
  EXPECT_EQ(CategoryFromKernelName("Memset (Device)", EventKind::kMemset, c), K::kMemory);
}

// Row level: the launching operator wins over the kernel's name; a generic inner operator takes
// its composite outer operator's category; memcpy and collectives keep theirs.
TEST(KernelCategoryTest, RowsPreferTheLaunchingOperator) {
  testing::TraceBuilder b;
  b.Cpu("cpu_op", "aten::embedding", 0, 100)
      .Cpu("cpu_op", "aten::index_select", 10, 50)
      .Launch("cudaLaunchKernel", 20, 5, 1)
      .Gpu("kernel", "void at::native::indexSelectLargeIndex<float>", 30, 10, 1)
      .Cpu("cpu_op", "aten::addmm", 200, 50)
      .Launch("cudaLaunchKernel", 210, 5, 2)
      .Gpu("kernel", "some_vendor_kernel_without_a_telling_name", 220, 10, 2)
      .Launch("cudaMemcpyAsync", 230, 5, 3)
      .Gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 240, 10, 3)
      .Cpu("cpu_op", "aten::view", 300, 50)
      .Launch("cudaLaunchKernel", 310, 5, 4)
      .Gpu("kernel", "void at::native::reduce_kernel<512, 1>", 320, 10, 4)
      .Launch("cudaLaunchKernel", 400, 5, 5)
      .Gpu("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 420, 10, 5);
  testing::TempDir dir;
  auto traces = ReadTraces(dir.Write("t.json", b.Json()));
  ASSERT_TRUE(traces.ok()) << traces.status().ToString();
  const RankTrace& t = (*traces)[0];
  auto row_named = [&](std::string_view name) {
    for (uint32_t i = 0; i < t.events.size(); ++i) {
      if (t.strings.Get(t.events.name[i]) == name) return i;
    }
    ADD_FAILURE() << "no row " << name;
    return kNoIndex;
  };
  auto gpu = [&](std::string_view prefix) {
    for (uint32_t r : t.links.gpu) {
      if (t.strings.Get(t.events.name[r]).substr(0, prefix.size()) == prefix) return r;
    }
    ADD_FAILURE() << "no GPU row " << prefix;
    return kNoIndex;
  };
  EXPECT_EQ(
      CategorizeKernel(t, gpu("void at::native::indexSelect"), row_named("aten::index_select")),
      K::kEmbedding);
  EXPECT_EQ(CategorizeKernel(t, gpu("some_vendor"), row_named("aten::addmm")), K::kGemm);
  EXPECT_EQ(CategorizeKernel(t, gpu("some_vendor"), kNoIndex), K::kOther);
  EXPECT_EQ(CategorizeKernel(t, gpu("Memcpy"), row_named("aten::addmm")), K::kMemory);
  EXPECT_EQ(CategorizeKernel(t, gpu("void at::native::reduce"), row_named("aten::view")),
            K::kReduction);
  EXPECT_EQ(CategorizeKernel(t, gpu("nccl"), row_named("aten::addmm")), K::kCommunication);
}

}  // namespace
}  // namespace vigil::trace
