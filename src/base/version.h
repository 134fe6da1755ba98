// SPDX-License-Identifier: Apache-2.0
// The release every Vigil program reports (--version, vigil_daemon_info, /api/v1/status).
#pragma once

namespace vigil {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace vigil
