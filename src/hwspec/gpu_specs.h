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

  double FlopPerClockPerUnit(GpuPipe pipe) const {
    return flop_per_clock_per_unit[static_cast<int>(pipe)];
  }
  double PeakFlops(GpuPipe pipe) const { return peak_flops[static_cast<int>(pipe)]; }
  // The largest dense peak over all pipes (the tensor peak used for "fraction of dense peak").
  double MaxDensePeakFlops() const;
};

// Every GPU model in the table.
std::span<const GpuSpec> AllGpuSpecs();

// Finds the spec for a device name as NVML / ROCm SMI / a trace report it, e.g.
// "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-16GB", "AMD Instinct MI300X",
// "NVIDIA H200", "NVIDIA L40S", or a canonical model name ("H100 SXM"). Case-insensitive.
// nullptr when the model is unknown (never a guess from a different family).
const GpuSpec* FindGpuSpec(std::string_view device_name);

}  // namespace vigil
