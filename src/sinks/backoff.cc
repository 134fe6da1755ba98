// SPDX-License-Identifier: Apache-2.0
#include "sinks/backoff.h"

#include <algorithm>

namespace vigil {

Backoff::Backoff(BackoffOptions options, uint64_t seed) : options_(options), rng_(seed) {}

int64_t Backoff::BaseDelayNs(const BackoffOptions& options, int failures) {
  double delay = static_cast<double>(std::max<int64_t>(options.initial_ns, 0));
  const double max = static_cast<double>(options.max_ns);
  for (int i = 1; i < failures && delay < max; ++i) {
    delay *= std::max(options.multiplier, 1.0);
  }
  return static_cast<int64_t>(std::min(delay, max));
}

int64_t Backoff::NextDelayNs() {
  if (failures_ < 1'000'000) {
    ++failures_;
  }
  const int64_t base = BaseDelayNs(options_, failures_);
  const double jitter = std::clamp(options_.jitter, 0.0, 1.0);
  if (jitter == 0) {
    return base;
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  return static_cast<int64_t>(static_cast<double>(base) * (1.0 - jitter * unit(rng_)));
}

}  // namespace vigil
