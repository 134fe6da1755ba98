// SPDX-License-Identifier: Apache-2.0
#include "hwspec/gpu_specs.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace vigil {
namespace {

constexpr double kT = 1e12;  // TFLOP/s or TB/s.
constexpr double kG = 1e9;   // GB or GB/s.

// Pipe order everywhere: fp64, fp32, fp16/bf16 tensor, tf32 tensor, fp8 tensor, fp64 tensor.
// The last brace of each entry is its DtypePeaks: bf16 tensor, int8 tensor, fp4 tensor, fp32
// matrix, fp16 vector, bf16 vector (dense).
using PerPipe = std::array<double, kGpuPipeCount>;

// Per-SM FLOP per clock for each architecture (FMA counted as 2 FLOP). Derived from the
// architecture whitepapers' per-SM unit counts and checked against the datasheet peaks below
// (peak = SMs x FLOP/clk/SM x boost clock, to within the vendors' rounding).
// Volta GV100 whitepaper: 32 FP64 + 64 FP32 cores, 8 tensor cores x 64 FMA per SM.
constexpr PerPipe kVoltaPerSm = {64, 128, 1024, 0, 0, 0};
// Ampere GA100 whitepaper: 32 FP64 + 64 FP32 cores, 4 tensor cores x 256 FP16 FMA per SM.
constexpr PerPipe kAmpereA100PerSm = {64, 128, 2048, 1024, 0, 128};
// Hopper GH100 whitepaper: 64 FP64 + 128 FP32 cores; tensor cores twice Ampere's rate per SM.
constexpr PerPipe kHopperPerSm = {128, 256, 4096, 2048, 8192, 256};
// Blackwell B200: tensor rates twice Hopper's per SM (datasheet peaks / 148 SMs / clock).
constexpr PerPipe kBlackwellPerSm = {128, 256, 8192, 4096, 16384, 128};
// Ada AD10x whitepaper: 128 FP32 cores, 2 FP64 units, 4 tensor cores per SM (FP32 accumulate).
constexpr PerPipe kAdaPerSm = {4, 256, 1024, 512, 2048, 0};
// CDNA3 (MI300X): per CU, from AMD's published peaks / 304 CUs / 2100 MHz.
constexpr PerPipe kCdna3PerCu = {128, 256, 2048, 1024, 4096, 256};
// CDNA2 (MI250X, MI210): per CU, from AMD's published peaks / CUs / 1700 MHz (non-packed FP32).
constexpr PerPipe kCdna2PerCu = {128, 128, 1024, 0, 0, 256};

constexpr GpuSpec kSpecs[] = {
    // NVIDIA Tesla V100 datasheet (SXM2): 7.8 TF FP64, 15.7 TF FP32, 125 TF tensor, 900 GB/s
    // HBM2, 300 W; 80 SMs, 1530 MHz boost (Volta whitepaper).
    // V100 whitepaper: FP16 (non-tensor) 31.4 TF (SXM2) / 28 TF (PCIe); no BF16 or INT8 tensor
    // cores.
    {"V100 SXM2 16GB",
     "nvidia",
     "volta",
     80,
     1530,
     kVoltaPerSm,
     {7.8 * kT, 15.7 * kT, 125 * kT, 0, 0, 0},
     16 * 1024ULL * 1024 * 1024,
     900 * kG,
     300,
     {0, 0, 0, 0, 31.4 * kT, 0}},
    {"V100 SXM2 32GB",
     "nvidia",
     "volta",
     80,
     1530,
     kVoltaPerSm,
     {7.8 * kT, 15.7 * kT, 125 * kT, 0, 0, 0},
     32 * 1024ULL * 1024 * 1024,
     900 * kG,
     300,
     {0, 0, 0, 0, 31.4 * kT, 0}},
    // V100 PCIe datasheet: 7 TF FP64, 14 TF FP32, 112 TF tensor, 900 GB/s, 250 W; 1380 MHz.
    {"V100 PCIe 16GB",
     "nvidia",
     "volta",
     80,
     1380,
     kVoltaPerSm,
     {7 * kT, 14 * kT, 112 * kT, 0, 0, 0},
     16 * 1024ULL * 1024 * 1024,
     900 * kG,
     250,
     {0, 0, 0, 0, 28 * kT, 0}},
    {"V100 PCIe 32GB",
     "nvidia",
     "volta",
     80,
     1380,
     kVoltaPerSm,
     {7 * kT, 14 * kT, 112 * kT, 0, 0, 0},
     32 * 1024ULL * 1024 * 1024,
     900 * kG,
     250,
     {0, 0, 0, 0, 28 * kT, 0}},
    // NVIDIA A100 datasheet: 9.7 TF FP64, 19.5 TF FP64 tensor, 19.5 TF FP32, 156 TF TF32, 312 TF
    // BF16/FP16 (dense); 40GB HBM2 1,555 GB/s; 80GB HBM2e 2,039 GB/s (SXM) / 1,935 GB/s (PCIe);
    // 400 W SXM, 250/300 W PCIe. 108 SMs, 1410 MHz boost (Ampere whitepaper).
    // A100 datasheet: BF16 tensor 312 TF, INT8 624 TOPS (dense); Ampere whitepaper: FP16 78 TF,
    // BF16 39 TF (non-tensor).
    {"A100 SXM4 40GB",
     "nvidia",
     "ampere",
     108,
     1410,
     kAmpereA100PerSm,
     {9.7 * kT, 19.5 * kT, 312 * kT, 156 * kT, 0, 19.5 * kT},
     40 * 1024ULL * 1024 * 1024,
     1555 * kG,
     400,
     {312 * kT, 624 * kT, 0, 0, 78 * kT, 39 * kT}},
    {"A100 SXM4 80GB",
     "nvidia",
     "ampere",
     108,
     1410,
     kAmpereA100PerSm,
     {9.7 * kT, 19.5 * kT, 312 * kT, 156 * kT, 0, 19.5 * kT},
     80 * 1024ULL * 1024 * 1024,
     2039 * kG,
     400,
     {312 * kT, 624 * kT, 0, 0, 78 * kT, 39 * kT}},
    {"A100 PCIe 40GB",
     "nvidia",
     "ampere",
     108,
     1410,
     kAmpereA100PerSm,
     {9.7 * kT, 19.5 * kT, 312 * kT, 156 * kT, 0, 19.5 * kT},
     40 * 1024ULL * 1024 * 1024,
     1555 * kG,
     250,
     {312 * kT, 624 * kT, 0, 0, 78 * kT, 39 * kT}},
    {"A100 PCIe 80GB",
     "nvidia",
     "ampere",
     108,
     1410,
     kAmpereA100PerSm,
     {9.7 * kT, 19.5 * kT, 312 * kT, 156 * kT, 0, 19.5 * kT},
     80 * 1024ULL * 1024 * 1024,
     1935 * kG,
     300,
     {312 * kT, 624 * kT, 0, 0, 78 * kT, 39 * kT}},
    // NVIDIA H100 datasheet (SXM): 34 TF FP64, 67 TF FP64 tensor, 67 TF FP32, 989 TF TF32*,
    // 1,979 TF BF16*, 3,958 TF FP8* (* = with sparsity; dense is half), 80GB HBM3 3.35 TB/s,
    // up to 700 W. 132 SMs, 1980 MHz max boost (the tensor peaks correspond to ~1830 MHz).
    // H100 datasheet: INT8 3,958 TOPS* (sparse; dense half); Hopper whitepaper: FP16 and BF16
    // (non-tensor) 133.8 TF (SXM5).
    {"H100 SXM",
     "nvidia",
     "hopper",
     132,
     1980,
     kHopperPerSm,
     {34 * kT, 67 * kT, 989.4 * kT, 494.7 * kT, 1978.9 * kT, 67 * kT},
     80 * 1024ULL * 1024 * 1024,
     3350 * kG,
     700,
     {989.4 * kT, 1978.9 * kT, 0, 0, 133.8 * kT, 133.8 * kT}},
    // H100 PCIe datasheet: 26 TF FP64, 51 TF FP64 tensor, 51 TF FP32, 756 TF TF32*, 1,513 TF
    // BF16*, 3,026 TF FP8* (sparse), 80GB HBM2e 2 TB/s, 350 W. 114 SMs, 1755 MHz boost.
    // H100 datasheet: INT8 3,026 TOPS* (sparse); Hopper whitepaper: FP16/BF16 (non-tensor) 102.4 TF
    // (PCIe).
    {"H100 PCIe",
     "nvidia",
     "hopper",
     114,
     1755,
     kHopperPerSm,
     {26 * kT, 51 * kT, 756 * kT, 378 * kT, 1513 * kT, 51 * kT},
     80 * 1024ULL * 1024 * 1024,
     2000 * kG,
     350,
     {756 * kT, 1513 * kT, 0, 0, 102.4 * kT, 102.4 * kT}},
    // NVIDIA H200 datasheet (SXM): compute as H100 SXM (34/67/67 TF, 989 TF TF32*, 1,979 TF
    // BF16*, 3,958 TF FP8*), 141GB HBM3e at 4.8 TB/s, up to 700 W.
    // H200 datasheet: INT8 3,958 TOPS* (sparse); non-tensor FP16/BF16 as H100 SXM.
    {"H200",
     "nvidia",
     "hopper",
     132,
     1980,
     kHopperPerSm,
     {34 * kT, 67 * kT, 989.4 * kT, 494.7 * kT, 1978.9 * kT, 67 * kT},
     141 * 1000ULL * 1000 * 1000,
     4800 * kG,
     700,
     {989.4 * kT, 1978.9 * kT, 0, 0, 133.8 * kT, 133.8 * kT}},
    // NVIDIA HGX B200 datasheet, per GPU (8-GPU totals / 8): 37 TF FP64 and FP64 tensor, 18 PF
    // TF32* / 36 PF BF16* / 72 PF FP8* for 8 GPUs (sparse; dense is half), 180GB HBM3e at 8 TB/s,
    // 1000 W. 148 SMs; 1965 MHz boost. FP32 non-tensor peak is not in the datasheet: derived.
    // HGX B200 datasheet, per GPU: 72 POPS INT8* and 144 PF FP4* for 8 GPUs (sparse; dense half).
    // Non-tensor FP16/BF16 not published: twice the FP32 rate (derived).
    {"B200",
     "nvidia",
     "blackwell",
     148,
     1965,
     kBlackwellPerSm,
     {37 * kT, 74.4 * kT, 2250 * kT, 1125 * kT, 4500 * kT, 37 * kT},
     180 * 1000ULL * 1000 * 1000,
     8000 * kG,
     1000,
     {2250 * kT, 4500 * kT, 9000 * kT, 0, 148.8 * kT, 148.8 * kT}},
    // NVIDIA L4 datasheet: 30.3 TF FP32, 120 TF TF32*, 242 TF FP16/BF16*, 485 TF FP8* (sparse),
    // 24GB GDDR6 300 GB/s, 72 W. 58 SMs, 2040 MHz boost. FP64 (1/64 rate) derived.
    // L4 datasheet: INT8 485 TOPS* (sparse); Ada runs non-tensor FP16/BF16 at the FP32 rate (Ada
    // whitepaper).
    {"L4",
     "nvidia",
     "ada",
     58,
     2040,
     kAdaPerSm,
     {0.47 * kT, 30.3 * kT, 121 * kT, 60 * kT, 242.5 * kT, 0},
     24 * 1000ULL * 1000 * 1000,
     300 * kG,
     72,
     {121 * kT, 242.5 * kT, 0, 0, 30.3 * kT, 30.3 * kT}},
    // NVIDIA L40S datasheet: 91.6 TF FP32, 366 TF TF32*, 733 TF BF16*, 1,466 TF FP8* (sparse;
    // 362.05 TF BF16 dense), 48GB GDDR6 864 GB/s, 350 W. 142 SMs, 2520 MHz boost.
    // L40S datasheet: INT8 1,466 TOPS* (sparse); non-tensor FP16/BF16 at the FP32 rate.
    {"L40S",
     "nvidia",
     "ada",
     142,
     2520,
     kAdaPerSm,
     {1.43 * kT, 91.6 * kT, 362.05 * kT, 183 * kT, 733 * kT, 0},
     48 * 1000ULL * 1000 * 1000,
     864 * kG,
     350,
     {362.05 * kT, 733 * kT, 0, 0, 91.6 * kT, 91.6 * kT}},
    // AMD Instinct MI300X data sheet: 81.7 TF FP64 vector, 163.4 TF FP64 matrix and FP32 vector,
    // 653.7 TF TF32, 1,307.4 TF FP16/BF16, 2,614.9 TF FP8 (dense), 192GB HBM3 5.3 TB/s, 750 W;
    // 304 CUs, 2100 MHz peak engine clock.
    // MI300X data sheet: INT8 2,614.9 TOPS, FP32 matrix 163.4 TF; FP16/BF16 vector at the packed
    // FP32 vector rate (163.4 TF).
    {"MI300X",
     "amd",
     "cdna3",
     304,
     2100,
     kCdna3PerCu,
     {81.7 * kT, 163.4 * kT, 1307.4 * kT, 653.7 * kT, 2614.9 * kT, 163.4 * kT},
     192 * 1000ULL * 1000 * 1000,
     5300 * kG,
     750,
     {1307.4 * kT, 2614.9 * kT, 0, 163.4 * kT, 163.4 * kT, 163.4 * kT}},
    // AMD Instinct MI250X data sheet: 47.9 TF FP64/FP32 vector, 95.7 TF FP64 matrix, 383 TF
    // FP16/BF16 matrix, 128GB HBM2e 3.2768 TB/s, 560 W; 220 CUs, 1700 MHz.
    // MI250X data sheet: INT8 383 TOPS, BF16 383 TF, FP32 matrix 95.7 TF; packed FP16/BF16
    // vector 95.7 TF (the packed FP32 rate).
    {"MI250X",
     "amd",
     "cdna2",
     220,
     1700,
     kCdna2PerCu,
     {47.9 * kT, 47.9 * kT, 383 * kT, 0, 0, 95.7 * kT},
     128 * 1000ULL * 1000 * 1000,
     3276.8 * kG,
     560,
     {383 * kT, 383 * kT, 0, 95.7 * kT, 95.7 * kT, 95.7 * kT}},
    // AMD Instinct MI210 data sheet: 22.6 TF FP64/FP32 vector, 45.3 TF FP64 matrix, 181 TF
    // FP16/BF16 matrix, 64GB HBM2e 1.6384 TB/s, 300 W; 104 CUs, 1700 MHz.
    // MI210 data sheet: INT8 181 TOPS, BF16 181 TF, FP32 matrix 45.3 TF; packed FP16/BF16
    // vector 45.3 TF.
    {"MI210",
     "amd",
     "cdna2",
     104,
     1700,
     kCdna2PerCu,
     {22.6 * kT, 22.6 * kT, 181 * kT, 0, 0, 45.3 * kT},
     64 * 1000ULL * 1000 * 1000,
     1638.4 * kG,
     300,
     {181 * kT, 181 * kT, 0, 45.3 * kT, 45.3 * kT, 45.3 * kT}},
};

constexpr std::string_view kPipeNames[kGpuPipeCount] = {"fp64",        "fp32",       "fp16_tensor",
                                                        "tf32_tensor", "fp8_tensor", "fp64_tensor"};

// Lower-cased alphanumeric tokens of `name` ("NVIDIA A100-SXM4-80GB" -> nvidia a100 sxm4 80gb).
std::vector<std::string> Tokens(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

const GpuSpec* ByModel(std::string_view model) {
  for (const GpuSpec& spec : kSpecs) {
    if (spec.model == model) return &spec;
  }
  return nullptr;
}

}  // namespace

std::string_view GpuPipeName(GpuPipe pipe) { return kPipeNames[static_cast<int>(pipe)]; }

std::optional<GpuPipe> ParseGpuPipe(std::string_view name) {
  for (int i = 0; i < kGpuPipeCount; ++i) {
    if (kPipeNames[i] == name) return static_cast<GpuPipe>(i);
  }
  return std::nullopt;
}

std::optional<GpuPipe> TensorPipeForDtype(std::string_view dtype) {
  std::string d;
  for (char c : dtype) d.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (d == "bf16" || d == "fp16" || d == "half" || d == "float16" || d == "bfloat16") {
    return GpuPipe::kFp16Tensor;
  }
  if (d == "tf32") return GpuPipe::kTf32Tensor;
  if (d == "fp8" || d == "float8" || d == "e4m3" || d == "e5m2" || d == "float8_e4m3fn" ||
      d == "float8_e5m2") {
    return GpuPipe::kFp8Tensor;
  }
  if (d == "fp32" || d == "float" || d == "float32") return GpuPipe::kFp32;
  if (d == "fp64" || d == "double" || d == "float64") return GpuPipe::kFp64Tensor;
  return std::nullopt;
}

double GpuSpec::MaxDensePeakFlops() const {
  return *std::max_element(peak_flops.begin(), peak_flops.end());
}

double PeakFlopsForComputeSpec(const GpuSpec& gpu, std::string_view spec) {
  const DtypePeaks& d = gpu.dtype_peaks;
  auto pipe = [&gpu](GpuPipe p) { return gpu.PeakFlops(p); };
  if (spec == "matrix_fp64") {
    return pipe(GpuPipe::kFp64Tensor) > 0 ? pipe(GpuPipe::kFp64Tensor) : pipe(GpuPipe::kFp64);
  }
  if (spec == "matrix_fp32") return d.fp32_matrix > 0 ? d.fp32_matrix : pipe(GpuPipe::kTf32Tensor);
  if (spec == "matrix_tf32") return pipe(GpuPipe::kTf32Tensor);
  if (spec == "matrix_bf16") return d.bf16_tensor;
  if (spec == "matrix_fp16") return pipe(GpuPipe::kFp16Tensor);
  if (spec == "matrix_fp8") return pipe(GpuPipe::kFp8Tensor);
  if (spec == "matrix_int8") return d.int8_tensor;
  if (spec == "matrix_fp4") return d.fp4_tensor;
  if (spec == "vector_fp64") return pipe(GpuPipe::kFp64);
  if (spec == "vector_fp32") return pipe(GpuPipe::kFp32);
  if (spec == "vector_bf16") return d.bf16_vector;
  if (spec == "vector_fp16") return d.fp16_vector;
  return 0;
}

std::span<const GpuSpec> AllGpuSpecs() { return kSpecs; }

const GpuSpec* FindGpuSpec(std::string_view device_name) {
  // Canonical names first ("H100 SXM", case-insensitive).
  for (const GpuSpec& spec : kSpecs) {
    if (Tokens(spec.model) == Tokens(device_name)) return &spec;
  }
  std::vector<std::string> tokens = Tokens(device_name);
  auto has = [&](std::string_view t) {
    return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
  };
  auto has_prefix = [&](std::string_view p) {
    return std::any_of(tokens.begin(), tokens.end(),
                       [&](const std::string& t) { return t.rfind(p, 0) == 0; });
  };
  const bool pcie = has("pcie");
  if (has("h200")) return ByModel("H200");
  if (has("b200")) return ByModel("B200");
  if (has("h100")) {
    if (has("nvl")) return nullptr;  // H100 NVL (94GB, 3.9 TB/s) is not in the table.
    return ByModel(pcie ? "H100 PCIe" : "H100 SXM");
  }
  if (has("a100")) {
    const bool big = has("80gb") || has("80");
    if (pcie) return ByModel(big ? "A100 PCIe 80GB" : "A100 PCIe 40GB");
    return ByModel(big ? "A100 SXM4 80GB" : "A100 SXM4 40GB");
  }
  if (has("v100") || has("v100s")) {
    const bool big = has("32gb") || has("32");
    if (pcie) return ByModel(big ? "V100 PCIe 32GB" : "V100 PCIe 16GB");
    return ByModel(big ? "V100 SXM2 32GB" : "V100 SXM2 16GB");
  }
  if (has("l40s")) return ByModel("L40S");
  if (has("l4")) return ByModel("L4");
  if (has("mi300x") || has_prefix("mi300x")) return ByModel("MI300X");
  if (has("mi250x") || has_prefix("mi250x")) return ByModel("MI250X");
  if (has("mi210")) return ByModel("MI210");
  return nullptr;
}

}  // namespace vigil
