// SPDX-License-Identifier: Apache-2.0
// The sink interface: where collected batches go after the daemon's scheduler produces them
// (JSON lines, remote-write, fleet push). A sink knows nothing of where samples came from.
// Consume() is called from the scheduler's thread and must not block on I/O: a sink queues the
// batch and does its work on its own thread, dropping (and counting) when it falls behind.
// health(), Flush() and Stop() may be called from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "metrics/metric.h"

namespace vigil {

struct SinkHealth {
  // kDegraded: the sink delivers, but what it buffers is held in memory only (its directory
  // cannot be written: disk full, unwritable state dir) and would be lost on a restart.
  enum class State { kOk, kDegraded, kFailed, kStopped };
  State state = State::kOk;
  std::string message;         // Why the sink is failing or degraded; "" when ok.
  uint64_t dropped = 0;        // Batches dropped because the sink fell behind or could not write.
  uint64_t at_risk_bytes = 0;  // Buffered in memory only, lost if the daemon restarts.
  // Accounting since the sink started, for status and the fault tests: samples the receiver took
  // (or the file got), samples dropped, and payloads waiting in the sink's buffer.
  uint64_t sent_samples = 0;
  uint64_t dropped_samples = 0;
  uint64_t buffered = 0;
  // Set while the sink's spool or buffer is held in memory only, whatever the state: what is
  // reduced, for the status reply's reduced_features ("" when its directory is usable).
  std::string reduced;
};

inline std::string_view SinkStateName(SinkHealth::State state) {
  switch (state) {
    case SinkHealth::State::kOk:
      return "ok";
    case SinkHealth::State::kDegraded:
      return "degraded";
    case SinkHealth::State::kFailed:
      return "failed";
    case SinkHealth::State::kStopped:
      return "stopped";
  }
  return "ok";
}

class Sink {
 public:
  virtual ~Sink() = default;
  virtual std::string_view name() const = 0;
  // Takes shared ownership of an immutable batch. Never blocks on I/O.
  virtual void Consume(BatchPtr batch) = 0;
  virtual SinkHealth health() const = 0;
  // Writes out everything consumed so far, waiting at most `timeout_ns`.
  virtual void Flush(int64_t timeout_ns) = 0;
  // Flushes, then stops the sink's thread; Consume() after Stop() drops the batch.
  virtual void Stop() = 0;
};

}  // namespace vigil
