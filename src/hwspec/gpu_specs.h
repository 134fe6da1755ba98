// SPDX-License-Identifier: Apache-2.0
// Data about GPU models: compute-unit (SM/CU) count, boost clock, FLOP per clock per compute
// unit for each arithmetic pipe, published dense peak FLOP/s, memory size and bandwidth.
// Why: the daemon's FLOP/s estimate (pipe activity x SMs x FLOP/clock/SM x measured clock) and the
// trace analyser's roofline share this one table. Owner: hwspec. The table is immutable static
// data; every function here is thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace vigil {

// Arithmetic pipes whose activity GPM/DCGM report (and whose peaks datasheets publish).
enum class GpuPipe {
  kFp64 = 0,    // Non-tensor FP64 (FMA = 2 FLOP).
  kFp32,        // Non-tensor FP32.
  kFp16Tensor,  // FP16/BF16 tensor (matrix) cores, dense, FP32 accumulate.
  kTf32Tensor,  // TF32 tensor cores, dense.
  kFp8Tensor,   // FP8 tensor cores, dense.
  kFp64Tensor,  // FP64 tensor (matrix) cores.
};
inline constexpr int kGpuPipeCount = 6;

// "fp64", "fp32", "fp16_tensor", "tf32_tensor", "fp8_tensor", "fp64_tensor": the `pipe` label.
std::string_view GpuPipeName(GpuPipe pipe);
std::optional<GpuPipe> ParseGpuPipe(std::string_view name);
// Maps a trace/framework dtype ("bf16", "float16", "fp8", "tf32", "float32", "fp64", ...) to the
// tensor pipe a matmul of that dtype runs on (fp32 -> kFp32, the non-tensor pipe).
std::optional<GpuPipe> TensorPipeForDtype(std::string_view dtype);

// Dense peaks the pipes above do not cover (FLOP/s; OP/s for INT8); 0 = the device has no such
// unit. Why a second table: the daemon's `pipe` label is the GpuPipe list and stays as it is; the
// analyser's roofline needs a peak per dtype pair as TraceLens names them (`Compute Spec`).
struct DtypePeaks {
  double bf16_tensor = 0;  // BF16 tensor/matrix cores (0 on Volta: FP16 only)
  double int8_tensor = 0;
  double fp4_tensor = 0;
  double fp32_matrix = 0;  // FP32 matrix cores (AMD MFMA); NVIDIA has TF32 instead
  double fp16_vector = 0;  // non-tensor FP16 (packed where the vendor counts it so)
  double bf16_vector = 0;  // non-tensor BF16
};

struct GpuSpec {
  std::string_view model;         // Canonical short name, e.g. "H100 SXM"; the `gpu_model` label.
  std::string_view vendor;        // "nvidia" or "amd".
  std::string_view architecture;  // "volta", "ampere", "hopper", "blackwell", "ada", "cdna3", ...
  int compute_units = 0;          // SMs (NVIDIA) or CUs (AMD).
  double boost_clock_mhz = 0;     // Maximum boost SM/engine clock.
  // FLOP per clock per compute unit for each pipe (index = GpuPipe); 0 = no such pipe.
  std::array<double, kGpuPipeCount> flop_per_clock_per_unit{};
  // Dense (no sparsity) peak FLOP/s per pipe as the vendor publishes it; 0 = no such pipe.
  std::array<double, kGpuPipeCount> peak_flops{};
  uint64_t memory_bytes = 0;                // Device memory (HBM or GDDR) as marketed.
  double memory_bandwidth_bytes_per_s = 0;  // Peak device-memory bandwidth.
  double tdp_watts = 0;                     // Maximum board power.
  DtypePeaks dtype_peaks{};

  double FlopPerClockPerUnit(GpuPipe pipe) const {
    return flop_per_clock_per_unit[static_cast<int>(pipe)];
  }
  double PeakFlops(GpuPipe pipe) const { return peak_flops[static_cast<int>(pipe)]; }
  // The largest dense peak over all pipes (the tensor peak used for "fraction of dense peak").
  double MaxDensePeakFlops() const;
};

// The dense peak for one of TraceLens's compute-spec names: "matrix_fp64", "matrix_fp32",
// "matrix_tf32", "matrix_bf16", "matrix_fp16", "matrix_fp8", "matrix_int8", "matrix_fp4",
// "vector_fp64", "vector_fp32", "vector_bf16", "vector_fp16". matrix_fp32 is the FP32 matrix rate
// on AMD and the TF32 tensor rate on NVIDIA; matrix_fp64 falls back to the FP64 vector rate where
// there are no FP64 tensor cores. 0 when the device has no such unit or the name is unknown.
double PeakFlopsForComputeSpec(const GpuSpec& gpu, std::string_view compute_spec);

// Every GPU model in the table.
std::span<const GpuSpec> AllGpuSpecs();

// Finds the spec for a device name as NVML / ROCm SMI / a trace report it, e.g.
// "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB", "AMD Instinct MI300X",
// "NVIDIA H200", "NVIDIA L40S", or a canonical model name ("H100 SXM"). Case-insensitive.
// nullptr when the model is unknown (never a guess from a different family).
const GpuSpec* FindGpuSpec(std::string_view device_name);

}  // namespace vigil
