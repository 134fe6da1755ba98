// SPDX-License-Identifier: Apache-2.0
#include "hwspec/gpu_specs.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

std::string_view ModelOf(std::string_view device_name) {
  const GpuSpec* spec = FindGpuSpec(device_name);
  return spec == nullptr ? "<none>" : spec->model;
}

TEST(FindGpuSpecTest, MatchesNvmlDeviceNames) {
  EXPECT_EQ(ModelOf("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(ModelOf("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(ModelOf("NVIDIA A100-SXM4-80GB"), "A100 SXM4 80GB");
  EXPECT_EQ(ModelOf("NVIDIA A100-SXM4-40GB"), "A100 SXM4 40GB");
  EXPECT_EQ(ModelOf("NVIDIA A100-PCIE-40GB"), "A100 PCIe 40GB");
  EXPECT_EQ(ModelOf("NVIDIA A100 80GB PCIe"), "A100 PCIe 80GB");
  EXPECT_EQ(ModelOf("Tesla V100-SXM2-16GB"), "V100 SXM2 16GB");
  EXPECT_EQ(ModelOf("Tesla V100-SXM2-32GB"), "V100 SXM2 32GB");
  EXPECT_EQ(ModelOf("Tesla V100-PCIE-32GB"), "V100 PCIe 32GB");
  EXPECT_EQ(ModelOf("NVIDIA H200"), "H200");
  EXPECT_EQ(ModelOf("NVIDIA B200"), "B200");
  EXPECT_EQ(ModelOf("NVIDIA L40S"), "L40S");
  EXPECT_EQ(ModelOf("NVIDIA L4"), "L4");
}

TEST(FindGpuSpecTest, MatchesAmdNames) {
  EXPECT_EQ(ModelOf("AMD Instinct MI300X"), "MI300X");
  EXPECT_EQ(ModelOf("AMD Instinct MI250X"), "MI250X");
  EXPECT_EQ(ModelOf("AMD Instinct MI210"), "MI210");
}

TEST(FindGpuSpecTest, MatchesCanonicalNamesCaseInsensitively) {
  for (const GpuSpec& spec : AllGpuSpecs()) {
    EXPECT_EQ(ModelOf(spec.model), spec.model);
  }
  EXPECT_EQ(ModelOf("h100 sxm"), "H100 SXM");
}

TEST(FindGpuSpecTest, UnknownDevicesGetNoSpec) {
  EXPECT_EQ(FindGpuSpec("NVIDIA GeForce RTX 4090"), nullptr);
  EXPECT_EQ(FindGpuSpec("NVIDIA H100 NVL"), nullptr);
  EXPECT_EQ(FindGpuSpec(""), nullptr);
  EXPECT_EQ(FindGpuSpec("NVIDIA L40"), nullptr);  // Not the L40S, not the L4.
}

// The published dense peak must equal units x FLOP/clk/unit x a clock no higher than the boost
// clock (datasheets round, and NVIDIA quotes tensor peaks at a lower clock than the max boost).
TEST(GpuSpecTableTest, PeaksAgreeWithPerUnitRatesAndClock) {
  for (const GpuSpec& spec : AllGpuSpecs()) {
    for (int i = 0; i < kGpuPipeCount; ++i) {
      const auto pipe = static_cast<GpuPipe>(i);
      const double per_unit = spec.FlopPerClockPerUnit(pipe);
      const double peak = spec.PeakFlops(pipe);
      SCOPED_TRACE(std::string(spec.model) + " " + std::string(GpuPipeName(pipe)));
      ASSERT_EQ(per_unit == 0, peak == 0);
      if (peak == 0) continue;
      const double at_boost = spec.compute_units * per_unit * spec.boost_clock_mhz * 1e6;
      EXPECT_LE(peak, at_boost * 1.02);
      EXPECT_GE(peak, at_boost * 0.85);
    }
    EXPECT_GT(spec.memory_bytes, 0u);
    EXPECT_GT(spec.memory_bandwidth_bytes_per_s, 0);
  }
}

TEST(GpuSpecTableTest, HandComputedH100Peaks) {
  const GpuSpec* h100 = FindGpuSpec("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->compute_units, 132);
  // 132 SMs x 4096 FLOP/clk x 1830 MHz = 989.4 TFLOP/s, the datasheet's dense BF16 figure.
  EXPECT_NEAR(132 * h100->FlopPerClockPerUnit(GpuPipe::kFp16Tensor) * 1830e6, 989.4e12, 0.1e12);
  EXPECT_DOUBLE_EQ(h100->MaxDensePeakFlops(), h100->PeakFlops(GpuPipe::kFp8Tensor));
  EXPECT_DOUBLE_EQ(h100->memory_bandwidth_bytes_per_s, 3.35e12);
  const GpuSpec* v100 = FindGpuSpec("Tesla V100-SXM2-16GB");
  ASSERT_NE(v100, nullptr);
  EXPECT_EQ(v100->PeakFlops(GpuPipe::kFp8Tensor), 0);  // Volta has no FP8 pipe.
}

// Published dense figures (datasheets; sparse figures halved), by TraceLens's compute-spec names.
TEST(ComputeSpecPeakTest, MatchesPublishedNumbers) {
  struct Case {
    std::string_view device, spec;
    double tflops;
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", "matrix_bf16", 989.4},  // 1,979 TF* sparse
      {"NVIDIA H100 80GB HBM3", "matrix_fp8", 1978.9},  // 3,958 TF* sparse
      {"NVIDIA H100 80GB HBM3", "matrix_int8", 1978.9},
      {"NVIDIA H100 80GB HBM3", "matrix_tf32", 494.7},
      {"NVIDIA H100 80GB HBM3", "matrix_fp64", 67},
      {"NVIDIA H100 80GB HBM3", "vector_fp32", 67},
      {"NVIDIA H100 80GB HBM3", "vector_bf16", 133.8},
      {"NVIDIA A100-SXM4-80GB", "matrix_fp16", 312},
      {"NVIDIA A100-SXM4-80GB", "matrix_int8", 624},
      {"NVIDIA A100-SXM4-80GB", "matrix_fp32", 156},  // TF32 tensor cores
      {"NVIDIA A100-SXM4-80GB", "vector_bf16", 39},
      {"NVIDIA A100-SXM4-80GB", "vector_fp16", 78},
      {"Tesla V100-SXM2-16GB", "matrix_fp16", 125},
      {"Tesla V100-SXM2-16GB", "matrix_bf16", 0},    // no BF16 tensor cores on Volta
      {"Tesla V100-SXM2-16GB", "matrix_fp64", 7.8},  // no FP64 tensor cores: the vector rate
      {"NVIDIA B200", "matrix_fp4", 9000},
      {"AMD Instinct MI300X", "matrix_bf16", 1307.4},
      {"AMD Instinct MI300X", "matrix_fp8", 2614.9},
      {"AMD Instinct MI300X", "matrix_fp32", 163.4},
      {"AMD Instinct MI300X", "vector_fp64", 81.7},
      {"AMD Instinct MI210", "matrix_int8", 181},
      {"AMD Instinct MI210", "matrix_tf32", 0},
      {"AMD Instinct MI210", "nonsense", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.device) + " " + std::string(c.spec));
    const GpuSpec* spec = FindGpuSpec(c.device);
    ASSERT_NE(spec, nullptr);
    EXPECT_NEAR(PeakFlopsForComputeSpec(*spec, c.spec), c.tflops * 1e12, 1e9);
  }
}

// Every GPU has a vector FP32 peak (the roofline's fallback) and a matrix rate at least as high
// as the vector rate of the same dtype wherever both exist.
TEST(ComputeSpecPeakTest, EveryGpuHasTheFallbackAndMatrixBeatsVector) {
  for (const GpuSpec& spec : AllGpuSpecs()) {
    SCOPED_TRACE(spec.model);
    EXPECT_GT(PeakFlopsForComputeSpec(spec, "vector_fp32"), 0);
    for (auto [matrix, vector] :
         {std::pair{"matrix_bf16", "vector_bf16"}, std::pair{"matrix_fp16", "vector_fp16"},
          std::pair{"matrix_fp64", "vector_fp64"}}) {
      const double m = PeakFlopsForComputeSpec(spec, matrix);
      const double v = PeakFlopsForComputeSpec(spec, vector);
      if (m > 0 && v > 0) {
        EXPECT_GE(m, v) << matrix;
      }
    }
  }
}

TEST(GpuSpecTableTest, ModelNamesAreUnique) {
  std::set<std::string_view> names;
  for (const GpuSpec& spec : AllGpuSpecs()) EXPECT_TRUE(names.insert(spec.model).second);
}

TEST(GpuPipeTest, NamesRoundTrip) {
  for (int i = 0; i < kGpuPipeCount; ++i) {
    const auto pipe = static_cast<GpuPipe>(i);
    EXPECT_EQ(ParseGpuPipe(GpuPipeName(pipe)), pipe);
  }
  EXPECT_EQ(ParseGpuPipe("int8"), std::nullopt);
}

TEST(GpuPipeTest, DtypesMapToTensorPipes) {
  EXPECT_EQ(TensorPipeForDtype("BF16"), GpuPipe::kFp16Tensor);
  EXPECT_EQ(TensorPipeForDtype("float16"), GpuPipe::kFp16Tensor);
  EXPECT_EQ(TensorPipeForDtype("tf32"), GpuPipe::kTf32Tensor);
  EXPECT_EQ(TensorPipeForDtype("fp8"), GpuPipe::kFp8Tensor);
  EXPECT_EQ(TensorPipeForDtype("float32"), GpuPipe::kFp32);
  EXPECT_EQ(TensorPipeForDtype("int4"), std::nullopt);
}

}  // namespace
}  // namespace vigil
