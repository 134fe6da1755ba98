// SPDX-License-Identifier: Apache-2.0
// The families the daemon's IPC fabric emits: its own datagram and registration counters, and the
// job metrics applications report over it. Declared here, below both, so the fabric (src/ipc)
// writes them and the collector table (src/collectors, which cannot see src/ipc) lists them for
// the naming lint and the docs.
#pragma once

#include "metrics/metric.h"

namespace vigil {

extern const MetricDesc kIpcDatagrams;
extern const MetricDesc kIpcDropped;
extern const MetricDesc kIpcReplies;
extern const MetricDesc kIpcProcesses;

extern const MetricDesc kJobStepSeconds;
extern const MetricDesc kJobModelFlops;
extern const MetricDesc kJobMfuRatio;
extern const MetricDesc kJobDeviceSecondsPerInputByte;

}  // namespace vigil
