// SPDX-License-Identifier: Apache-2.0
// Short display forms of kernel names: namespaces kept, collisions resolved.
#include "trace/report/display_names.h"

#include <set>

#include <gtest/gtest.h>

namespace vigil::trace {
namespace {

TEST(DisplayNamesTest, AnonymousNamespacesAndNotesSurvive) {
  EXPECT_EQ(ShortenName("void at::native::(anonymous namespace)::cat_batched_copy<float, 4>("
                        "at::native::(anonymous namespace)::CatArrInputTensorMetadata<float>)",
                        0),
            "at::native::(anonymous namespace)::cat_batched_copy<...>");
  EXPECT_EQ(ShortenName("Memcpy DtoH (Device -> Pageable)", 0), "Memcpy DtoH (Device -> Pageable)");
  EXPECT_EQ(ShortenName("ampere_sgemm_128x64_nn", 0), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(ShortenName("void foo<(bool)1>(int)", 0), "foo<...>");
  EXPECT_LE(ShortenName(std::string(300, 'x'), 70).size(), 70u);
}

TEST(DisplayNamesTest, DifferentNamesNeverReadTheSame) {
  const std::string a =
      "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>("
      "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)";
  const std::string b =
      "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8>("
      "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x64_64x3_tn_align8::Params)";
  DisplayNames names(70);
  const std::string sa = names.Get(a), sb = names.Get(b);
  EXPECT_NE(sa, sb);
  EXPECT_EQ(names.Get(a), sa);  // stable
  EXPECT_LE(sb.size(), 70u);
  // Names that differ only deep in the middle still differ once shortened.
  DisplayNames few(20);
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    const std::string n =
        "ns::kernel<" + std::string(40, 'a') + std::to_string(i) + std::string(40, 'b') + ">(int)";
    const std::string& s = few.Get(n);
    EXPECT_TRUE(seen.insert(s).second) << s;
    EXPECT_LE(s.size(), 20u);
  }
}

}  // namespace
}  // namespace vigil::trace
