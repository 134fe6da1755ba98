// SPDX-License-Identifier: Apache-2.0
// Exponential backoff with jitter for retried network calls (remote-write, fleet push): the
// n-th consecutive failure waits min(initial * multiplier^(n-1), max) shortened by a random
// fraction of up to `jitter`, so many daemons that lost the same receiver do not retry in step.
// Thread-compatible (one owner); the random source is seeded so tests are deterministic.
#pragma once

#include <cstdint>
#include <random>

namespace vigil {

struct BackoffOptions {
  int64_t initial_ns = 250'000'000;  // 250ms
  int64_t max_ns = 30'000'000'000;   // 30s
  double multiplier = 2.0;
  double jitter = 0.2;  // 0 = none; 0.2 = each delay is 80%..100% of the base.
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options, uint64_t seed = std::random_device{}());

  // The delay to wait after one more consecutive failure.
  int64_t NextDelayNs();
  // After a success: the next failure starts again from `initial_ns`.
  void Reset() { failures_ = 0; }
  int failures() const { return failures_; }

  // The un-jittered delay after `failures` consecutive failures (failures >= 1).
  static int64_t BaseDelayNs(const BackoffOptions& options, int failures);

 private:
  BackoffOptions options_;
  std::mt19937_64 rng_;
  int failures_ = 0;
};

}  // namespace vigil
