// SPDX-License-Identifier: Apache-2.0
// The list of every sink vigild can push batches to, in --help order. Adding a sink = one row in
// all_sinks.cc (and its keys in sink_config.h). Nothing registers itself.
#pragma once

#include <span>

#include "sinks/sink_config.h"

namespace vigil {

std::span<const SinkInfo* const> AllSinks();

}  // namespace vigil
