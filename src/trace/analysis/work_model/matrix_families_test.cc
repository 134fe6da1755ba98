// SPDX-License-Identifier: Apache-2.0
// The matrix families of the work model (GEMM, convolution, attention, inference attention,
// MoE) on shapes small enough to count by hand, and the context they read from outside an
// operator's inputs (step annotations, MoE kernels) taken from the real shared traces and held
// against what TraceLens read from them.
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <zlib.h>

#include "trace/analysis/work_model/inference_attention.h"
#include "trace/analysis/work_model/moe.h"
#include "trace/analysis/work_model/op_models.h"
#include "trace/testing/tracelens_reference.h"

namespace vigil::trace {
namespace {

namespace fs = std::filesystem;
using Dims = std::vector<std::vector<int64_t>>;
using Strings = std::vector<std::string>;

OpInputs In(Dims dims, Strings types, Strings concrete = {}) {
  OpInputs in;
  in.dims = std::move(dims);
  in.types = std::move(types);
  in.concrete = std::move(concrete);
  in.concrete.resize(in.dims.size());
  in.strides.resize(in.dims.size());
  return in;
}

void ExpectWork(std::string_view op, const OpInputs& in, std::string_view category, double flops,
                double bytes, std::string_view spec) {
  SCOPED_TRACE(std::string(op));
  std::optional<OpWork> w = ModelOperator(op, in);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->category, category);
  EXPECT_DOUBLE_EQ(w->flops, flops);
  EXPECT_DOUBLE_EQ(w->bytes, bytes);
  EXPECT_EQ(ComputeSpecName(w->spec), spec);
}

const std::string kBf16 = "c10::BFloat16";

TEST(GemmWorkTest, HandCounted) {
  // [4, 8] x [8, 16]: 2*4*16*8 = 1024 FLOPs; (32 + 128 + 64) elements * 2 B = 448 B.
  ExpectWork("aten::mm", In({{4, 8}, {8, 16}}, {kBf16, kBf16}), "GEMM", 1024, 448, "matrix_bf16");
  // addmm adds the bias: + 4*16 = 64 FLOPs, + 16 elements; fp32: (32+128+64+16) * 4 = 960 B.
  ExpectWork("aten::addmm", In({{16}, {4, 8}, {8, 16}, {}, {}}, {"float", "float", "float"}),
             "GEMM", 1088, 960, "matrix_fp32");
  // Three [4, 8] x [8, 16] in fp16: 3 * 1024 FLOPs, 3 * 224 * 2 = 1344 B.
  ExpectWork("aten::bmm", In({{3, 4, 8}, {3, 8, 16}}, {"c10::Half", "c10::Half"}), "GEMM", 3072,
             1344, "matrix_fp16");
  // linear on [2, 5, 8] with w [16, 8] and a bias: M = 10: 2*10*16*8 + 160 = 2720 FLOPs;
  // (80 + 128 + 160 + 16) * 2 = 768 B.
  ExpectWork("aten::linear", In({{2, 5, 8}, {16, 8}, {16}}, {kBf16, kBf16, kBf16}), "GEMM", 2720,
             768, "matrix_bf16");
  // matmul broadcasts [2, 1, 4, 8] with [3, 8, 16] to 6 products of 1024 FLOPs, 224 elements.
  ExpectWork("aten::matmul", In({{2, 1, 4, 8}, {3, 8, 16}}, {kBf16, kBf16}), "GEMM", 6144, 2688,
             "matrix_bf16");
  // FP8 _scaled_mm with a bias at position 4: 1088 FLOPs; 32 + 128 + 16 B of FP8 operands and
  // bias, 64 * 2 B of 16-bit output = 304 B.
  ExpectWork("aten::_scaled_mm",
             In({{4, 8}, {8, 16}, {}, {}, {16}},
                {"c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", kBf16}),
             "GEMM", 1088, 304, "matrix_fp8");
  // vLLM x[4, 8] @ w[16, 8]^T + bias[16]: 1088 FLOPs, (32 + 128 + 64 + 16) * 2 = 480 B.
  ExpectWork("vllm::rocm_unquantized_gemm", In({{4, 8}, {16, 8}, {16}}, {kBf16, kBf16, kBf16}),
             "GEMM", 1088, 480, "matrix_bf16");
  // 10 tokens over 4 experts' [8, 16] weights: 2*10*16*8 = 2560 FLOPs;
  // (80 + 4*128 + 160) * 2 = 1504 B.
  ExpectWork("aten::_grouped_mm", In({{10, 8}, {4, 8, 16}, {4}}, {kBf16, kBf16, "int"}), "GEMM",
             2560, 1504, "matrix_bf16");
  EXPECT_FALSE(ModelOperator("aten::mm", In({{4, 8}}, {kBf16})).has_value());
}

TEST(ConvWorkTest, HandCounted) {
  const Strings conv_args = {"", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"};
  // [1, 2, 5, 5] (*) [3, 2, 3, 3] -> [1, 3, 3, 3]: 27 outputs * 2*18 = 972 FLOPs;
  // (50 + 54 + 27) * 2 = 262 B. The bias input is not counted (docs/work-model.md).
  ExpectWork("aten::convolution",
             In({{1, 2, 5, 5}, {3, 2, 3, 3}, {3}, {}, {}, {}, {}, {}, {}}, {kBf16, kBf16, kBf16},
                conv_args),
             "CONV_fwd", 972, 262, "matrix_bf16");
  // Stride 2, padding 1 on 7x7: (7 + 2 - 2 - 1) / 2 + 1 = 4 -> 48 outputs * 36 = 1728 FLOPs;
  // (98 + 54 + 48) * 2 = 400 B.
  ExpectWork("aten::convolution",
             In({{1, 2, 7, 7}, {3, 2, 3, 3}, {}, {}, {}, {}, {}, {}, {}}, {kBf16, kBf16},
                {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"}),
             "CONV_fwd", 1728, 400, "matrix_bf16");
  // Transposed, stride 2: [1, 2, 3, 3] -> (3-1)*2 + 2 + 1 = 7: [1, 4, 7, 7]; each of the 18
  // input elements meets 4*9 weights: 18 * 72 = 1296 FLOPs; (18 + 72 + 196) * 2 = 572 B.
  ExpectWork("aten::convolution",
             In({{1, 2, 3, 3}, {2, 4, 3, 3}, {}, {}, {}, {}, {}, {}, {}}, {kBf16, kBf16},
                {"", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"}),
             "CONV_fwd", 1296, 572, "matrix_bf16");
  // MIOpen fuses the bias: + 27 FLOPs, + 3 elements: 999 FLOPs, 268 B.
  ExpectWork("aten::miopen_convolution",
             In({{1, 2, 5, 5}, {3, 2, 3, 3}, {3}, {}, {}, {}, {}}, {kBf16, kBf16, kBf16},
                {"", "", "", "[0, 0]", "[1, 1]", "[1, 1]", "1"}),
             "CONV_fwd", 999, 268, "matrix_bf16");
  // Backward of the first, input and weight gradients only: 2 * 972 FLOPs; each reads
  // grad_output and one operand and writes the other: 2 * (27 + 54 + 50) * 2 = 524 B.
  Strings bwd_args = {
      "", "", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"};
  Dims bwd_dims = {{1, 3, 3, 3}, {1, 2, 5, 5}, {3, 2, 3, 3}, {}, {}, {}, {}, {}, {}, {}, {}};
  ExpectWork("aten::convolution_backward", In(bwd_dims, {kBf16, kBf16, kBf16}, bwd_args),
             "CONV_bwd", 1944, 524, "matrix_bf16");
  // With the bias gradient: + 27 FLOPs (a sum), + (27 + 3) * 2 B.
  bwd_args[10] = "[True, True, True]";
  ExpectWork("aten::convolution_backward", In(bwd_dims, {kBf16, kBf16, kBf16}, bwd_args),
             "CONV_bwd", 1971, 584, "matrix_bf16");
}

TEST(AttentionWorkTest, HandCounted) {
  // B=2, H=4, N=16, d=8: 2*2*4*16*16*(8+8) = 65536 FLOPs; Q, K, V, O of 1024 elements: 8192 B.
  Dims bhnd = {{2, 4, 16, 8}, {2, 4, 16, 8}, {2, 4, 16, 8}, {}, {}, {}, {}};
  Strings types = {kBf16, kBf16, kBf16};
  ExpectWork("aten::_scaled_dot_product_flash_attention",
             In(bhnd, types, {"", "", "", "0.", "False", "False", "0.35"}), "SDPA_fwd", 65536, 8192,
             "matrix_bf16");
  // Causal over a square score matrix: half.
  ExpectWork("aten::_scaled_dot_product_flash_attention",
             In(bhnd, types, {"", "", "", "0.", "True", "False", "0.35"}), "SDPA_fwd", 32768, 8192,
             "matrix_bf16");
  // flash-attn [B, N, H, d], 16 queries over 32 keys with 2 KV heads, causal from the bottom
  // right: row i sees i + 17 keys, 392 of 512 pairs; 2*2*4*16*32*16 * 392/512 = 100352 FLOPs.
  // Q and O: 2*16*4*8 = 1024 elements each, K and V: 2*32*2*8 = 1024 each: 8192 B.
  Strings fa(8);
  fa[5] = "True";
  ExpectWork("flash_attn::_flash_attn_forward",
             In({{2, 16, 4, 8}, {2, 32, 2, 8}, {2, 32, 2, 8}, {}, {}, {}, {}, {}}, types, fa),
             "SDPA_fwd", 100352, 8192, "matrix_bf16");
  // Backward (dout, q, k, v) at B=1, N=8, H=2, d=4: 128 score pairs, five products (dV, dP, dQ,
  // dK and the recomputed S) of 2*128*4 FLOPs = 5120; seven tensors of 64 elements: 896 B.
  Dims bwd = {{1, 8, 2, 4}, {1, 8, 2, 4}, {1, 8, 2, 4}, {1, 8, 2, 4}};
  ExpectWork("flash_attn::_flash_attn_backward", In(bwd, {kBf16, kBf16, kBf16, kBf16}), "SDPA_bwd",
             5120, 896, "matrix_bf16");
}

TEST(InferenceAttentionWorkTest, HandCounted) {
  // H_Q = 4, H_KV = 2, d = 8. Prefill: 2 FLOPs per (d_qk + d_v) for each of the 36 sq*sk
  // pairs less half of the 20 causal sq^2 ones: 4 * (2*36 - 20) * 16 = 3328; decode:
  // 4 * 2 * 40 * 16 = 5120.
  // Bytes: 10 new tokens * (32 + 32 + 16 + 16) + 40 cached tokens * 32 = 2240 elements * 2.
  OpInputs in = In({{10, 4, 8}, {10, 2, 8}, {10, 2, 8}, {10, 4, 8}}, {kBf16, kBf16, kBf16, kBf16});
  EXPECT_FALSE(ModelOperator("vllm::unified_attention_with_output", in).has_value())
      << "no step: the work is unknown";
  in.step = ServingStep{6, 10, 20, 36, 4, 40, 4, 40, true};
  ExpectWork("vllm::unified_attention_with_output", in, "InferenceAttention_fwd", 8448, 4480,
             "matrix_bf16");
  in.step->kv_known = false;
  EXPECT_FALSE(ModelOperator("vllm::unified_attention_with_output", in).has_value());
  // store_cache copies k and v ([32, 1024] each) into the cache: 4 * 32768 * 2 B, no FLOPs.
  // vLLM writes key and value [32, 8, 64] (16384 elements each) into an FP8 cache: 32768
  // elements read at 2 B and written at 1 B = 98304 B.
  ExpectWork("_C_cache_ops::reshape_and_cache_flash",
             In({{32, 8, 64}, {32, 8, 64}, {9, 32, 8, 64}, {9, 32, 8, 64}, {32}},
                {kBf16, kBf16, "c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "long int"}),
             "InferenceAttention_fwd", 0, 98304, "vector_bf16");
  ExpectWork("sglang::store_cache",
             In({{32, 1024}, {32, 1024}, {9, 1024}, {9, 1024}, {32}}, {kBf16, kBf16}),
             "InferenceAttention_fwd", 0, 262144, "vector_bf16");
}

TEST(InferenceAttentionWorkTest, StepAnnotations) {
  auto s = ParseServingStep(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37"
      "(sq37sk34489sqsq37sqsk34489)");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->c_sq, 8155);
  EXPECT_EQ(s->c_sqsk, 7671310);
  EXPECT_EQ(s->g_sk, 34489);
  s = ParseServingStep(
      "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 "
      "g_sqsq=1 g_sqsk=12]");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->c_sk, 8);
  EXPECT_EQ(s->g_sqsk, 12);
  s = ParseServingStep("step[EXTEND bs=2 toks=10]");  // two prompts of 5: 2 * 25 pairs
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->c_sq, 10);
  EXPECT_EQ(s->c_sqsq, 50);
  s = ParseServingStep("step[DECODE bs=64]");
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->kv_known);
  s = ParseServingStep("decode[bs=32 tok=128 d=32 spec=3 sqsq=512 sqsk=262144 sk=65536]");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->g_sq, 128);
  EXPECT_EQ(s->g_sk, 65536);
  EXPECT_FALSE(ParseServingStep("execute_context_2(14721)_generation_0(0)").has_value());
  EXPECT_FALSE(ParseServingStep("ProfilerStep#3").has_value());
}

TEST(MoeWorkTest, HandCounted) {
  // M = 4 tokens, K = N = 8, E = 4 experts, top 2, FP8 weights: 4 * (1 - (2/4)^4) = 3.75
  // experts active. Up (gated): 2*4*8*8*2*2 = 2048 FLOPs; 64 + 3.75*2*64 + 4*2*8*2 = 672 B.
  // Down: 1024 FLOPs; 4*2*8*2 + 3.75*64 + 64 = 432 B.
  OpInputs in = In({{4, 8}, {4, 4}, {}, {}}, {kBf16, kBf16});
  EXPECT_FALSE(ModelOperator("vllm::moe_forward", in).has_value()) << "no routing";
  in.moe = MoeRouting{2, "FP8", true};
  ExpectWork("pseudo_op::moe_triton_unfused_up", in, "MoE_unfused_fwd", 2048, 672, "matrix_fp8");
  ExpectWork("pseudo_op::moe_triton_unfused_down", in, "MoE_unfused_fwd", 1024, 432, "matrix_fp8");
  ExpectWork("vllm::moe_forward", in, "MoE_unfused_fwd", 3072, 1104, "matrix_fp8");
  // Fused: 4 tokens, K = 8, 4 experts of N = 8 gated (w1 [4, 16, 8]), FP8 weights and input,
  // BF16 output, top 2 (3.75 active): 2048 + 1024 FLOPs of GEMMs + 4*8*(2*2 - 1) = 96 for the
  // weighted sum; 32 B input + 3.75 * 3 * 64 B weights + 64 B output = 816 B.
  Strings fused_args(9);
  fused_args[8] = "2";
  ExpectWork("aiter::fmoe_g1u1",
             In({{4, 8}, {4, 8}, {4, 16, 8}, {4, 8, 8}, {}, {}, {}, {}, {}},
                {kBf16, "c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz"},
                fused_args),
             "MoE_fused_fwd", 3168, 816, "matrix_fp8");
  EXPECT_EQ(MoeWeightDtypeFromKernel("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu"),
            "FP4");
  EXPECT_TRUE(MoeKernelIsGated("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu"));
  EXPECT_FALSE(MoeKernelIsGated("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1"));
}

std::string Inflate(const fs::path& path) {
  std::string text;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

// Every event name in a Kineto JSON text, with where it is (a scan: the traces are large and
// only names and a few arguments are needed).
std::vector<std::pair<size_t, std::string>> Names(const std::string& text) {
  std::vector<std::pair<size_t, std::string>> names;
  for (size_t pos = text.find("\"name\":"); pos != std::string::npos;
       pos = text.find("\"name\":", pos + 1)) {
    size_t open = text.find('"', pos + 7);
    if (open == std::string::npos) break;
    std::string name;
    size_t i = open + 1;
    for (; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      name += text[i];
    }
    names.emplace_back(pos, std::move(name));
  }
  return names;
}

// The category of the event whose name is at `pos`.
bool IsCategory(const std::string& text, size_t pos, std::string_view cat) {
  size_t begin = text.rfind('{', pos);
  std::string head = text.substr(begin, pos - begin);
  return head.find("\"cat\": \"" + std::string(cat) + "\"") != std::string::npos ||
         head.find("\"cat\":\"" + std::string(cat) + "\"") != std::string::npos;
}

// The i-th string of the "Concrete Inputs" list that follows `pos`.
std::string ConcreteInput(const std::string& text, size_t pos, int i) {
  size_t list = text.find("\"Concrete Inputs\"", pos);
  if (list == std::string::npos) return "";
  size_t q = text.find('[', list);
  for (int k = 0; k <= i; ++k) {
    size_t open = text.find('"', q + 1);
    size_t close = text.find('"', open + 1);
    if (open == std::string::npos || close == std::string::npos) return "";
    if (k == i) return text.substr(open + 1, close - open - 1);
    q = close;
  }
  return "";
}

fs::path TraceLensRoot() { return fs::path(VIGIL_SHARED_DIR) / "traces" / "TraceLens"; }

// The step of every inference reference row, parsed from the serving engine's annotation in
// the trace itself, equals what TraceLens read; the work then matches its row.
TEST(InferenceAttentionWorkTest, StepsFromTheSharedTraces) {
  fs::path root = TraceLensRoot();
  if (!fs::exists(root)) GTEST_SKIP() << "no " << root << ": the shared trace set is absent";
  std::string error;
  auto rows = testing::LoadTraceLensRows(root.string(), &error);
  ASSERT_TRUE(error.empty()) << error;
  int checked = 0;
  for (const auto& row : rows) {
    if (!row.inputs.step.has_value()) continue;
    SCOPED_TRACE(row.file + " " + row.name);
    fs::path dir = (root / row.file).parent_path().parent_path();
    std::optional<ServingStep> from_trace;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".gz") continue;
      std::string text = Inflate(entry.path());
      for (const auto& [pos, name] : Names(text)) {
        if (!IsCategory(text, pos, "user_annotation")) continue;
        // The annotation with per-request sums wins over SGLang's plain step[...] label.
        auto s = ParseServingStep(name);
        if (s.has_value() && (!from_trace.has_value() || name.find("sq") != std::string::npos)) {
          from_trace = s;
        }
      }
    }
    ASSERT_TRUE(from_trace.has_value()) << "no step annotation in " << dir;
    const ServingStep& want = *row.inputs.step;
    EXPECT_EQ(from_trace->c_sq, want.c_sq);
    EXPECT_EQ(from_trace->c_sk, want.c_sk);
    EXPECT_EQ(from_trace->c_sqsq, want.c_sqsq);
    EXPECT_EQ(from_trace->c_sqsk, want.c_sqsk);
    EXPECT_EQ(from_trace->g_sq, want.g_sq);
    EXPECT_EQ(from_trace->g_sk, want.g_sk);
    EXPECT_EQ(from_trace->g_sqsk, want.g_sqsk);
    OpInputs in = row.inputs;
    in.step = from_trace;
    auto w = ModelOperator(row.name, in);
    ASSERT_TRUE(w.has_value());
    EXPECT_NEAR(w->flops / 1e9, row.gflops, 1e-3 * row.gflops);
    ++checked;
  }
  EXPECT_EQ(checked, 3) << "the vLLM and two SGLang references";
}

// The MoE routing TraceLens used (k = 4 of 32 experts, FP4 weights, a gated up projection)
// comes from the layer's TopK operator and its kernel names in the shared vLLM trace.
TEST(MoeWorkTest, RoutingFromTheSharedTrace) {
  fs::path dir = TraceLensRoot() / "tests/traces/inference/vllm_prefilldecode_piecewise";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << ": the shared trace set is absent";
  int topk = 0, layers = 0;
  for (const auto& entry : fs::directory_iterator(dir / "capture_traces")) {
    if (entry.path().extension() != ".gz") continue;
    std::string text = Inflate(entry.path());
    for (const auto& [pos, name] : Names(text)) {
      if (name == "vllm::moe_forward") ++layers;
      if (name == "TopK") topk = std::stoi(ConcreteInput(text, pos, 1));
    }
  }
  EXPECT_EQ(layers, 24);
  EXPECT_EQ(topk, 4);
  int gated = 0, plain = 0;
  std::string text = Inflate(dir / "graph_execution.json.gz");
  for (const auto& [pos, name] : Names(text)) {
    if (!IsCategory(text, pos, "kernel") || !IsMoeGemmKernel(name)) continue;
    // Fused: 4 tokens, K = 8, 4 experts of N = 8 gated (w1 [4, 16, 8]), FP8 weights and input,
    // BF16 output, top 2 (3.75 active): 2048 + 1024 FLOPs of GEMMs + 4*8*(2*2 - 1) = 96 for the
    // weighted sum; 32 B input + 3.75 * 3 * 64 B weights + 64 B output = 816 B.
    Strings fused_args(9);
    fused_args[8] = "2";
    ExpectWork("aiter::fmoe_g1u1",
               In({{4, 8}, {4, 8}, {4, 16, 8}, {4, 8, 8}, {}, {}, {}, {}, {}},
                  {kBf16, "c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz", "c10::Float8_e4m3fnuz"},
                  fused_args),
               "MoE_fused_fwd", 3168, 816, "matrix_fp8");
    EXPECT_EQ(MoeWeightDtypeFromKernel(name), "FP4") << name;
    (MoeKernelIsGated(name) ? gated : plain)++;
  }
  EXPECT_EQ(gated, 24);  // one up and one down projection per layer, 24 layers
  EXPECT_EQ(plain, 24);
}

}  // namespace
}  // namespace vigil::trace
