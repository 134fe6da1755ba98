// SPDX-License-Identifier: Apache-2.0
// uid -> user name through the host's passwd database (getpwuid_r), falling back to the number
// when the uid has no entry (containers, fixture trees). Thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace vigil {

std::string UserNameForUid(int64_t uid);

}  // namespace vigil
