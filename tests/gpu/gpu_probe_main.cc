// SPDX-License-Identifier: Apache-2.0
// vigil_gpu_probe: runs the GPU collector a few ticks the way the daemon would (backend chosen by
// name, NVML found by soname unless --nvml-library is given) and prints every sample as
// `name{label="value",...} value`, then `status: ...` and `backend: ...`. Integration tests run it
// with LD_LIBRARY_PATH pointing at the fake libnvidia-ml.so.1; on a GPU machine it shows what the
// real library reports. Usage: vigil_gpu_probe [--backend B] [--nvml-library P] [--ticks N]
// [--interval-ms M]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "collectors/gpu_collector.h"
#include "gpu/gpu_backend.h"

int main(int argc, char** argv) {
  vigil::GpuBackendOptions options;
  options.backend = "nvml";
  int ticks = 2;
  int interval_ms = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--backend")
      options.backend = argv[i + 1];
    else if (flag == "--nvml-library")
      options.nvml_library = argv[i + 1];
    else if (flag == "--ticks")
      ticks = std::atoi(argv[i + 1]);
    else if (flag == "--interval-ms")
      interval_ms = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  vigil::GpuCollectorConfig config;
  config.make_backend = [options] { return vigil::CreateGpuBackend(options); };
  vigil::GpuCollector collector(std::move(config));
  vigil::Status status;
  vigil::MetricBatch batch;
  for (int t = 0; t < ticks; ++t) {
    if (t > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    batch = vigil::MetricBatch{};
    vigil::MetricWriter writer(&batch);
    status = collector.Collect(writer);
  }
  for (const vigil::Sample& s : batch.samples) {
    std::string line(s.desc->name);
    line += "{";
    for (size_t i = 0; i < s.labels.size(); ++i) {
      line += (i ? "," : "") + s.labels[i].first + "=\"" + s.labels[i].second + "\"";
    }
    std::printf("%s} %.17g\n", line.c_str(), s.value);
  }
  std::printf("status: %s\n", status.ToString().c_str());
  std::printf("backend: %s\n", collector.Describe().c_str());
  return status.ok() ? 0 : 1;
}
