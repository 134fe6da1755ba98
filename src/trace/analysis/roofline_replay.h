// SPDX-License-Identifier: Apache-2.0
// The length of the device timeline replayed with every GPU event at its measured time and the
// idle gaps removed: the denominator of % of roofline. The critical-path engine replays the
// timeline with its dependencies (stream order, events, collectives); until it provides
// ReplayedDeviceLength, ReplayedLengthStandIn stands in: per device, the GPU events in start
// order on the union of its streams, gaps removed (the busy time of the union of streams), summed
// over the devices.
// Owner: trace. Pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "trace/analysis/gpu_view.h"

namespace vigil::trace {

// Over the GpuView rows `rows` (indexes into the view, in view order, kernels/memcpy/memset
// only), in view units.
int64_t ReplayedLengthStandIn(const GpuView& view, std::span<const size_t> rows);

// The measured wall time of the same rows: per device, last end minus first start, summed.
int64_t DeviceWallTime(const GpuView& view, std::span<const size_t> rows);

}  // namespace vigil::trace
