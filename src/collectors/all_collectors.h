// SPDX-License-Identifier: Apache-2.0
// The list of every collector Vigil has, in --help order. Adding a collector = one row in
// all_collectors.cc. Nothing registers itself (static registration is dropped by the linker).
#pragma once

#include <span>

#include "collectors/collector.h"

namespace vigil {

std::span<const CollectorInfo* const> AllCollectors();

}  // namespace vigil
