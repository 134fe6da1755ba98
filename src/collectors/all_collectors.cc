// SPDX-License-Identifier: Apache-2.0
#include "collectors/all_collectors.h"

namespace vigil {
namespace {

// One row per collector, sorted by name. Declarations come from each collector's header.
constexpr const CollectorInfo* kAllCollectors[] = {
    nullptr,  // Placeholder so the array is never empty; AllCollectors() skips it.
};

}  // namespace

std::span<const CollectorInfo* const> AllCollectors() {
  return std::span<const CollectorInfo* const>(kAllCollectors).subspan(1);
}

}  // namespace vigil
