// SPDX-License-Identifier: Apache-2.0
// The vector operator families on hand-computed shapes: each expectation is worked out in the
// comment above it from the formula in docs/work-model.md, independently of the code.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "trace/analysis/work_model/op_models.h"
#include "trace/analysis/work_model/vector_operands.h"
#include "trace/testing/tracelens_reference.h"

namespace vigil::trace {
namespace {

// An operator's inputs, one {dims, type, concrete} triple per position.
struct Arg {
  std::vector<int64_t> dims;
  std::string type;
  std::string concrete;
};

OpInputs Inputs(const std::vector<Arg>& args) {
  OpInputs in;
  for (const Arg& a : args) {
    in.dims.push_back(a.dims);
    in.types.push_back(a.type);
    in.strides.push_back({});
    in.concrete.push_back(a.concrete);
  }
  return in;
}

const std::string kBf16 = "c10::BFloat16";
const std::string kF32 = "float";

void ExpectWork(const std::optional<OpWork>& work, std::string_view category, double flops,
                double bytes, std::string_view spec) {
  ASSERT_TRUE(work.has_value());
  EXPECT_EQ(work->category, category);
  EXPECT_DOUBLE_EQ(work->flops, flops);
  EXPECT_DOUBLE_EQ(work->bytes, bytes);
  EXPECT_EQ(ComputeSpecName(work->spec), spec);
}

TEST(VectorOperandsTest, ParsesConcreteLists) {
  std::vector<int64_t> ints;
  EXPECT_TRUE(ParseIntList("[16, 32, 32]", &ints));
  EXPECT_EQ(ints, (std::vector<int64_t>{16, 32, 32}));
  EXPECT_TRUE(ParseIntList("[]", &ints));
  EXPECT_TRUE(ints.empty());
  EXPECT_TRUE(ParseIntList("768", &ints));
  EXPECT_EQ(ints, (std::vector<int64_t>{768}));
  EXPECT_FALSE(ParseIntList("", &ints));
  EXPECT_FALSE(ParseIntList("[1, x]", &ints));
  std::vector<bool> flags;
  EXPECT_TRUE(ParseBoolList("[True, False, True]", &flags));
  EXPECT_EQ(flags, (std::vector<bool>{true, false, true}));
  EXPECT_FALSE(ParseBoolList("[true]", &flags));
  EXPECT_EQ(ParseNumber("3."), 3.0);
  EXPECT_EQ(ParseNumber("1.0000000000000001e-05"), 1e-05);
  EXPECT_FALSE(ParseNumber("None").has_value());
  std::vector<double> numbers;
  EXPECT_TRUE(ParseNumberList("[2., 0.5]", &numbers));
  EXPECT_EQ(numbers, (std::vector<double>{2, 0.5}));
  EXPECT_FALSE(ParseNumberList("2.", &numbers));
  EXPECT_EQ(OperandBytes("Scalar"), 4);
  EXPECT_FALSE(OperandBytes("ScalarList").has_value());
  EXPECT_EQ(VectorSpec("long int"), ComputeSpec::kUnknown);
}

TEST(NormalizationWorkTest, LayerNormForward) {
  // x [2, 4, 8] bf16 over [8]: n = 64, C = 8. FLOPs 6C + 2n + 3n (batch statistics) = 368.
  // Bytes: x in and out 64*2*2 = 256, six per-channel tensors (mean, var, weight, bias, and the
  // two written statistics) 6*8*2 = 96: 352.
  ExpectWork(ModelOperator("aten::native_layer_norm", Inputs({{{2, 4, 8}, kBf16, ""},
                                                              {{}, "ScalarList", "[8]"},
                                                              {{8}, kBf16, ""},
                                                              {{8}, kBf16, ""},
                                                              {{}, "Scalar", "1e-05"}})),
             "Normalization_fwd", 368, 352, "vector_bf16");
}

TEST(NormalizationWorkTest, LayerNormWithoutConcreteInputs) {
  // As PyTorch before 2.0 records it (HTA's rank_unavailable trace): no normalized_shape, so the
  // weight's [512] gives it. x [1024, 512] float: n = 524288, C = 512. FLOPs 5n + 6C = 2624512;
  // bytes 8n + 6*512*4 = 4206592.
  OpInputs in = Inputs({{{1024, 512}, kF32, ""},
                        {{}, "", ""},
                        {{512}, kF32, ""},
                        {{512}, kF32, ""},
                        {{}, "Scalar", ""}});
  in.concrete.clear();
  ExpectWork(ModelOperator("aten::native_layer_norm", in), "Normalization_fwd", 2624512, 4206592,
             "vector_fp32");
  // Its backward (HTA's trace_filter trace): x [2048, 1, 742] over the weight's 742, weight and
  // bias recorded, so all three gradients. n = 1519616, 2048 per channel: FLOPs 742*(4 + 5)*2048
  // = 13676544. Bytes: grad 4n, x twice 8n, 1/std, weight, grad_weight and grad_bias 4*742*4:
  // 6078464 + 12156928 + 11872 = 18247264.
  in = Inputs({{{2048, 1, 742}, kF32, ""},
               {{2048, 1, 742}, kF32, ""},
               {{}, "", ""},
               {{2048, 1, 1}, kF32, ""},
               {{2048, 1, 1}, kF32, ""},
               {{1, 742}, kF32, ""},
               {{1, 742}, kF32, ""},
               {{}, "", ""}});
  in.concrete.clear();
  ExpectWork(ModelOperator("aten::native_layer_norm_backward", in), "Normalization_bwd", 13676544,
             18247264, "vector_fp32");
}

TEST(NormalizationWorkTest, BatchNormEvalAndTraining) {
  // x [2, 3, 4, 4] float: n = 96, C = 3. Eval: FLOPs 6C + 2n = 210; bytes 96*4*2 = 768 plus
  // mean, var, weight, bias 4*3*4 = 48: 816. Training adds 3n FLOPs (498) and two written
  // statistics 2*3*4 bytes (840).
  std::vector<Arg> args = {{{2, 3, 4, 4}, kF32, ""}, {{3}, kF32, ""},
                           {{3}, kF32, ""},          {{3}, kF32, ""},
                           {{3}, kF32, ""},          {{}, "Scalar", "False"},
                           {{}, "Scalar", "0.1"},    {{}, "Scalar", "1e-05"}};
  ExpectWork(ModelOperator("aten::native_batch_norm", Inputs(args)), "Normalization_fwd", 210, 816,
             "vector_fp32");
  args[5].concrete = "True";
  ExpectWork(ModelOperator("aten::cudnn_batch_norm", Inputs(args)), "Normalization_fwd", 498, 840,
             "vector_fp32");
}

TEST(NormalizationWorkTest, LayerNormBackward) {
  // grad, x [2, 8] float over [8]: n = 16, C = 8, 2 elements per channel. FLOPs per channel
  // 4*2 (dot product) + 5*2 (grad_input) = 18, times 8 = 144. Bytes: grad_out 16*4 = 64, x read
  // twice 128, saved 1/std 32, weight 32, grad_weight and grad_bias 64: 320.
  ExpectWork(ModelOperator("aten::native_layer_norm_backward",
                           Inputs({{{2, 8}, kF32, ""},
                                   {{2, 8}, kF32, ""},
                                   {{}, "ScalarList", "[8]"},
                                   {{2, 1}, kF32, ""},
                                   {{2, 1}, kF32, ""},
                                   {{8}, kF32, ""},
                                   {{8}, kF32, ""},
                                   {{}, "ScalarList", "[True, True, True]"}})),
             "Normalization_bwd", 144, 320, "vector_fp32");
}

TEST(NormalizationWorkTest, RmsNormAten) {
  // x [4, 16] bf16 over [16]: n = 64, 4 rows. FLOPs 4*(2*16 + 2) + 2*64 = 264. Bytes: x in and
  // out 64*2*2 = 256, weight 16*2 = 32: 288.
  ExpectWork(ModelOperator("aten::_fused_rms_norm", Inputs({{{4, 16}, kBf16, ""},
                                                            {{}, "ScalarList", "[16]"},
                                                            {{16}, kBf16, ""},
                                                            {{}, "Scalar", ""}})),
             "Normalization_fwd", 264, 288, "vector_bf16");
}

TEST(RmsNormWorkTest, FusedAddRmsNorm) {
  // aiter::add_rmsnorm(out, x, res_in, res_out, weight, eps), [4, 16] bf16: RMS FLOPs 264 (as
  // above) + 64 adds = 328. Bytes: x, residual read and out, residual written 4*64*2 = 512, plus
  // weight 32: 544. vLLM's in-place _C::fused_add_rms_norm(x, residual, weight, eps) the same.
  ExpectWork(ModelOperator("aiter::add_rmsnorm", Inputs({{{4, 16}, kBf16, ""},
                                                         {{4, 16}, kBf16, ""},
                                                         {{4, 16}, kBf16, ""},
                                                         {{4, 16}, kBf16, ""},
                                                         {{16}, kBf16, ""},
                                                         {{}, "Scalar", "1e-06"}})),
             "RMSNorm_fwd", 328, 544, "vector_bf16");
  ExpectWork(ModelOperator("_C::fused_add_rms_norm", Inputs({{{4, 16}, kBf16, ""},
                                                             {{4, 16}, kBf16, ""},
                                                             {{16}, kBf16, ""},
                                                             {{}, "Scalar", "1e-06"}})),
             "RMSNorm_fwd", 328, 544, "vector_bf16");
}

TEST(RmsNormWorkTest, QuantisingVariants) {
  // vllm::rocm_aiter_rmsnorm_fp8_group_quant(x [4, 16] bf16, weight, eps, group_size 8): RMS FLOPs
  // 264 + 2*64 for the quantisation = 392. Bytes: x 64*2 = 128, weight 32, FP8 out 64, FP32
  // scales 4 rows * 2 groups * 4 = 32: 256.
  ExpectWork(
      ModelOperator("vllm::rocm_aiter_rmsnorm_fp8_group_quant", Inputs({{{4, 16}, kBf16, ""},
                                                                        {{16}, kBf16, ""},
                                                                        {{}, "Scalar", "1e-06"},
                                                                        {{}, "Scalar", "8"}})),
      "RMSNorm_fwd", 392, 256, "vector_bf16");
  // aiter::rmsnorm2d_fwd_with_dynamicquant_ck(out, x, yscale, weight, eps, flag): one scale per
  // row: 128 + 32 + 64 + 4*4 = 240 bytes.
  ExpectWork(ModelOperator("aiter::rmsnorm2d_fwd_with_dynamicquant_ck",
                           Inputs({{{4, 16}, "c10::Float8_e4m3fn", ""},
                                   {{4, 16}, kBf16, ""},
                                   {{4, 1}, kF32, ""},
                                   {{16}, kBf16, ""},
                                   {{}, "Scalar", "1e-06"},
                                   {{}, "Scalar", "0"}})),
             "RMSNorm_fwd", 392, 240, "vector_bf16");
}

TEST(ElementwiseWorkTest, UnaryAndCasts) {
  // sigmoid [3, 5] float: 15 FLOPs, 15*4 read + 15*4 written = 120 bytes.
  ExpectWork(ModelOperator("aten::sigmoid", Inputs({{{3, 5}, kF32, ""}})), "UnaryElementwise", 15,
             120, "vector_fp32");
  // copy_ of float [10] into bf16: 10 FLOPs, 10*4 read + 10*2 written = 60 bytes; the peak is
  // the destination's.
  ExpectWork(ModelOperator("aten::copy_",
                           Inputs({{{10}, kBf16, ""}, {{10}, kF32, ""}, {{}, "Scalar", "False"}})),
             "UnaryElementwise", 10, 60, "vector_bf16");
  // An integer copy has no vector peak: an empty Compute Spec. [4] int <- long: 4*4 + 4*8 = 48.
  ExpectWork(ModelOperator("aten::copy_", Inputs({{{4}, "int", ""}, {{4}, "long int", ""}})),
             "UnaryElementwise", 4, 48, "");
  // fill_ [3, 4] float: no FLOPs, 12*4 = 48 bytes written.
  ExpectWork(ModelOperator("aten::fill_", Inputs({{{3, 4}, kF32, ""}, {{}, "Scalar", "0"}})),
             "UnaryElementwise", 0, 48, "vector_fp32");
}

TEST(ElementwiseWorkTest, BinaryBroadcastAndScalars) {
  // [4, 1, 8] * [3, 1] bf16 broadcast to [4, 3, 8] = 96: 96 FLOPs; bytes 32*2 + 3*2 + 96*2 = 262.
  ExpectWork(ModelOperator("aten::mul", Inputs({{{4, 1, 8}, kBf16, ""}, {{3, 1}, kBf16, ""}})),
             "BinaryElementwise", 96, 262, "vector_bf16");
  // float [5] + Python number (4 bytes) with alpha: 5*4 + 4 + 5*4 = 44.
  ExpectWork(ModelOperator("aten::add",
                           Inputs({{{5}, kF32, ""}, {{}, "Scalar", "2"}, {{}, "Scalar", "1"}})),
             "BinaryElementwise", 5, 44, "vector_fp32");
  // bf16 [4] * float [4]: the result takes the wider operand: 4*2 + 4*4 + 4*4 = 40.
  ExpectWork(ModelOperator("aten::mul", Inputs({{{4}, kBf16, ""}, {{4}, kF32, ""}})),
             "BinaryElementwise", 4, 40, "vector_bf16");
  // A comparison writes one byte per element: float [6] == [6]: 6*4*2 + 6 = 54.
  ExpectWork(ModelOperator("aten::eq", Inputs({{{6}, kF32, ""}, {{6}, kF32, ""}})),
             "BinaryElementwise", 6, 54, "vector_fp32");
  // Shapes that do not broadcast are not modelled.
  EXPECT_FALSE(ModelOperator("aten::sub", Inputs({{{3}, kF32, ""}, {{4}, kF32, ""}})).has_value());
}

TEST(ElementwiseWorkTest, TernaryGatedAndUpsample) {
  // where(bool [8], float [8], Python number): 8 selects; 8*1 + 8*4 + 4 read, 8*4 written = 76.
  ExpectWork(ModelOperator("aten::where",
                           Inputs({{{8}, "bool", ""}, {{8}, kF32, ""}, {{}, "Scalar", "0"}})),
             "TernaryElementwise", 8, 76, "vector_fp32");
  // addcmul_ on float [4]: 3 FLOPs per element = 12; the three tensors read 48, self written 16
  // (the scalar value, a fourth argument, is not counted): 64.
  ExpectWork(
      ModelOperator(
          "aten::addcmul_",
          Inputs({{{4}, kF32, ""}, {{4}, kF32, ""}, {{4}, kF32, ""}, {{}, "Scalar", "0.5"}})),
      "TernaryElementwise", 12, 64, "vector_fp32");
  // silu_and_mul(out [2, 8], in [2, 16]) bf16: 5 FLOPs per output element = 80; gate and up read
  // 2*16*2 = 64, out written 16*2 = 32: 96.
  ExpectWork(ModelOperator("sgl_kernel::silu_and_mul",
                           Inputs({{{2, 8}, kBf16, ""}, {{2, 16}, kBf16, ""}})),
             "UnaryElementwise", 80, 96, "vector_bf16");
  // upsample_nearest2d [1, 2, 3, 3] -> [1, 2, 6, 6] bf16: 72 FLOPs; (18 + 72)*2 = 180 bytes,
  // from the output size or from the scale factors.
  ExpectWork(ModelOperator("aten::upsample_nearest2d", Inputs({{{1, 2, 3, 3}, kBf16, ""},
                                                               {{}, "ScalarList", "[6, 6]"},
                                                               {{}, "Scalar", ""},
                                                               {{}, "Scalar", ""}})),
             "UnaryElementwise", 72, 180, "vector_bf16");
  ExpectWork(ModelOperator("aten::upsample_nearest2d", Inputs({{{1, 2, 3, 3}, kBf16, ""},
                                                               {{}, "ScalarList", ""},
                                                               {{}, "Scalar", "2."},
                                                               {{}, "Scalar", "2."}})),
             "UnaryElementwise", 72, 180, "vector_bf16");
  // The .vec overload: no output size, one list of scale factors.
  ExpectWork(ModelOperator(
                 "aten::upsample_nearest2d",
                 Inputs({{{1, 2, 3, 3}, kBf16, ""}, {{}, "", ""}, {{}, "ScalarList", "[2., 2.]"}})),
             "UnaryElementwise", 72, 180, "vector_bf16");
}

TEST(ReduceWorkTest, ReductionsAndScans) {
  // sum of float [4, 8]: 32 FLOPs; 32*4 read + one element written = 132 bytes.
  ExpectWork(ModelOperator(
                 "aten::sum",
                 Inputs({{{4, 8}, kF32, ""}, {{}, "ScalarList", "[1]"}, {{}, "Scalar", "False"}})),
             "Reduce_fwd", 32, 132, "vector_fp32");
  // cumsum of long [10]: 10 FLOPs, 10*8 read + 10*8 written = 160; integers have no peak.
  ExpectWork(ModelOperator("aten::cumsum", Inputs({{{10}, "long int", ""}, {{}, "Scalar", "0"}})),
             "Reduce_fwd", 10, 160, "");
}

TEST(SoftmaxWorkTest, ForwardAndBackward) {
  // _softmax(half [4, 10], -1, half_to_float=True): 5*40 = 200 FLOPs; 40*2 read + 40*4 written
  // = 240 bytes.
  ExpectWork(
      ModelOperator(
          "aten::_softmax",
          Inputs({{{4, 10}, "c10::Half", ""}, {{}, "Scalar", "-1"}, {{}, "Scalar", "True"}})),
      "Softmax_fwd", 200, 240, "vector_fp16");
  // backward float [4, 10]: 4*40 = 160 FLOPs; grad_output and output read, grad_input written:
  // 3*40*4 = 480 bytes.
  ExpectWork(ModelOperator("aten::_softmax_backward_data", Inputs({{{4, 10}, kF32, ""},
                                                                   {{4, 10}, kF32, ""},
                                                                   {{}, "Scalar", "-1"},
                                                                   {{}, "Scalar", "6"}})),
             "Softmax_bwd", 160, 480, "vector_fp32");
}

TEST(EmbeddingWorkTest, LookupsAndBackward) {
  // embedding(weight [100, 16] float, indices [2, 5] long): 10 rows of 16; indices 10*8 = 80,
  // rows read and written 2*10*16*4 = 1280: 1360 bytes, no FLOPs.
  ExpectWork(
      ModelOperator("aten::embedding", Inputs({{{100, 16}, kF32, ""}, {{2, 5}, "long int", ""}})),
      "Embedding_fwd", 0, 1360, "vector_fp32");
  // index_select(self [100, 16], 0, index [7]): 7*8 + 2*7*16*4 = 952.
  ExpectWork(
      ModelOperator("aten::index_select",
                    Inputs({{{100, 16}, kF32, ""}, {{}, "Scalar", "0"}, {{7}, "long int", ""}})),
      "Embedding_fwd", 0, 952, "vector_fp32");
  // embedding_dense_backward(grad [2, 5, 16], indices [2, 5], 100 rows): 160 adds; grad read
  // 160*4 = 640, indices 80, the [100, 16] gradient written 6400: 7120.
  ExpectWork(ModelOperator("aten::embedding_dense_backward", Inputs({{{2, 5, 16}, kF32, ""},
                                                                     {{2, 5}, "long int", ""},
                                                                     {{}, "Scalar", "100"},
                                                                     {{}, "Scalar", "-1"},
                                                                     {{}, "Scalar", "False"}})),
             "Embedding_bwd", 160, 7120, "vector_fp32");
}

TEST(RopeWorkTest, CachedRotaryEmbedding) {
  // rotary_embedding(positions [4], q [4, 64], k [4, 16], head_size 16, cache [256, 16], True)
  // bf16: 4 query and 1 key heads of 16 per token, all turned: 320 elements, 3 FLOPs each = 960;
  // read and written once: 320*2*2 = 1280 bytes.
  std::vector<Arg> args = {{{4}, "long int", ""}, {{4, 64}, kBf16, ""},   {{4, 16}, kBf16, ""},
                           {{}, "Scalar", "16"},  {{256, 16}, kBf16, ""}, {{}, "Scalar", "True"}};
  ExpectWork(ModelOperator("sgl_kernel::rotary_embedding", Inputs(args)), "RoPE_fwd", 960, 1280,
             "vector_bf16");
  ExpectWork(ModelOperator("_C::rotary_embedding", Inputs(args)), "RoPE_fwd", 960, 1280,
             "vector_bf16");
}

TEST(RopeWorkTest, PartialRotaryTurnsOnlyTheCachedWidth) {
  // head_size 32 but a cos/sin cache of width 16: of the 320 query and key elements (10 heads of
  // 32) 160 turn: 480 FLOPs, 160*2*2 = 640 bytes.
  ExpectWork(ModelOperator("_C::rotary_embedding", Inputs({{{4}, "long int", ""},
                                                           {{4, 64}, kBf16, ""},
                                                           {{4, 16}, kBf16, ""},
                                                           {{}, "Scalar", "32"},
                                                           {{128, 16}, kBf16, ""},
                                                           {{}, "Scalar", "True"}})),
             "RoPE_fwd", 480, 640, "vector_bf16");
}

TEST(ElementwiseWorkTest, EmptyTensorsBroadcastToEmpty) {
  // [0, 8] * [1, 8] broadcasts to [0, 8]: no FLOPs; only the [1, 8] operand is read: 16 bytes.
  ExpectWork(ModelOperator("aten::mul", Inputs({{{0, 8}, kBf16, ""}, {{1, 8}, kBf16, ""}})),
             "BinaryElementwise", 0, 16, "vector_bf16");
}

// Every reference row of the vector categories with its inputs cut short at each length, and with
// its types blanked: a model may decline, but never reads past the recorded inputs (ASan) or
// returns negative or non-finite work.
TEST(VectorFamiliesTest, TruncatedReferenceInputsAreSafe) {
  std::filesystem::path root = std::filesystem::path(VIGIL_SHARED_DIR) / "traces" / "TraceLens";
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no " << root << ": shared traces absent";
  std::string error;
  std::vector<testing::TraceLensRow> rows = testing::LoadTraceLensRows(root.string(), &error);
  ASSERT_TRUE(error.empty()) << error;
  const std::set<std::string> kVector = {"Normalization",    "Normalization_fwd", "RMSNorm_fwd",
                                         "UnaryElementwise", "BinaryElementwise", "Reduce_fwd",
                                         "RoPE_fwd"};
  int checked = 0;
  for (const testing::TraceLensRow& row : rows) {
    if (kVector.count(row.category) == 0) continue;
    SCOPED_TRACE(row.file + ":" + std::to_string(row.line) + " " + row.name);
    for (size_t len = 0; len <= row.inputs.dims.size(); ++len) {
      for (bool blank_types : {false, true}) {
        OpInputs in = row.inputs;
        in.dims.resize(std::min(len, in.dims.size()));
        in.types.resize(std::min(len, in.types.size()));
        in.concrete.resize(std::min(len, in.concrete.size()));
        if (blank_types) in.types.assign(in.types.size(), "");
        std::optional<OpWork> work = ModelOperator(row.name, in);
        ++checked;
        if (!work) continue;
        EXPECT_TRUE(std::isfinite(work->flops) && work->flops >= 0) << work->flops;
        EXPECT_TRUE(std::isfinite(work->bytes) && work->bytes >= 0) << work->bytes;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(VectorFamiliesTest, UnknownShapesAndNamesStayUnmodelled) {
  EXPECT_FALSE(ModelOperator("aten::sigmoid", OpInputs{}).has_value());
  EXPECT_FALSE(ModelOperator("aten::layer_norm", Inputs({{{2, 8}, kF32, ""}})).has_value());
  EXPECT_FALSE(ModelOperator("aten::relu", Inputs({{{2, 8}, "", ""}})).has_value());
  EXPECT_FALSE(ModelOperator("aten::not_an_op", Inputs({{{2, 8}, kF32, ""}})).has_value());
  std::set<std::string_view> families;
  for (const OpModel& m : AllOpModels()) EXPECT_TRUE(families.insert(m.family).second);
}

}  // namespace
}  // namespace vigil::trace
