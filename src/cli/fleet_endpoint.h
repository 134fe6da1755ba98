// SPDX-License-Identifier: Apache-2.0
// Where the `vigil fleet ...` commands and `vigil analyze --upload` find vigil-fleet and the token
// they present: one rule for every command that talks to the service. Owner: cli. Stateless.
#pragma once

#include <string>

#include "base/status.h"

namespace vigil {

// $VIGIL_FLEET_URL, else http://127.0.0.1:9480.
std::string DefaultFleetUrl();

// The token in a token file: the last field of the first non-comment line ("TOKEN" or
// "HOST TOKEN", so vigild's fleet token file and vigil-fleet's own lines both work).
StatusOr<std::string> ReadFleetToken(const std::string& path);

}  // namespace vigil
