// SPDX-License-Identifier: Apache-2.0
// `--gpu-backend sim`: plausible GPUs and jobs for demos and tests of everything downstream.
// Eight H100 SXM by default: GPUs 0-3 run a training job whose steps dip during data loading,
// 4-6 a fine-tuning job, and GPU 7 is held by a notebook that does nothing (held-but-idle).
// Values are a pure function of the time since start, so two reads at the same instant agree.
// Every sample the collector makes from it carries simulated="true". Owner: gpu.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>

#include "gpu/gpu_backend.h"

namespace vigil {

class SimBackend : public GpuBackend {
 public:
  // `now_ns` is a monotonic clock (tests pass a fake one).
  SimBackend(int gpus, std::function<int64_t()> now_ns);

  std::string_view name() const override { return "sim"; }
  bool simulated() const override { return true; }
  Status Read(std::vector<GpuReading>* out) override;
  std::string Describe() const override;

 private:
  int gpus_;
  std::function<int64_t()> now_ns_;
  int64_t start_ns_;
};

}  // namespace vigil
