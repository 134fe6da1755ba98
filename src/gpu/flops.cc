// SPDX-License-Identifier: Apache-2.0
#include "gpu/flops.h"

namespace vigil {

std::optional<FlopsEstimate> EstimateFlops(const GpuSpec& spec, const GpuActivity& a,
                                           std::optional<double> sm_clock_hz) {
  const double clock = sm_clock_hz.value_or(spec.boost_clock_mhz * 1e6);
  const double per_clock = spec.compute_units * clock;  // Unit-clocks per second.
  auto rate = [&](GpuPipe pipe) { return spec.FlopPerClockPerUnit(pipe) * per_clock; };
  bool measured = false;
  double flops = 0;
  auto add = [&](const std::optional<double>& ratio, double pipe_rate) {
    if (ratio) {
      measured = true;
      flops += *ratio * pipe_rate;
    }
  };
  add(a.fp64_active, rate(GpuPipe::kFp64));
  add(a.fp32_active, rate(GpuPipe::kFp32));
  add(a.fp16_active, 2 * rate(GpuPipe::kFp32));
  if (a.hmma_active || a.dfma_active || a.imma_active) {
    add(a.hmma_active, rate(GpuPipe::kFp16Tensor));
    const double dfma = spec.FlopPerClockPerUnit(GpuPipe::kFp64Tensor) > 0
                            ? rate(GpuPipe::kFp64Tensor)
                            : rate(GpuPipe::kFp64);
    add(a.dfma_active, dfma);
    add(a.imma_active, 2 * rate(GpuPipe::kFp16Tensor));
  } else {
    add(a.tensor_active, rate(GpuPipe::kFp16Tensor));
  }
  if (!measured) return std::nullopt;
  FlopsEstimate est;
  est.flops = flops;
  est.dense_peak_flops = spec.PeakFlops(GpuPipe::kFp16Tensor);
  if (est.dense_peak_flops <= 0) est.dense_peak_flops = spec.MaxDensePeakFlops();
  est.dense_peak_ratio = est.dense_peak_flops > 0 ? flops / est.dense_peak_flops : 0;
  return est;
}

}  // namespace vigil
