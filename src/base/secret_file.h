// SPDX-License-Identifier: Apache-2.0
// Secret files named on a command line (tokens, remote-write credentials). On a shared host a
// secret that group or others can read is as good as published, so both vigild and vigil-fleet
// check the mode of each one before reading it: an exposed file is one WARN line naming the flag,
// the path and the mode, or a refusal to start with --strict-permissions. Thread-safe.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace vigil {

// "" when no one but the owner may read or write a file of mode `mode`; else what is exposed, as
// in "mode 0644: readable by group and others".
std::string SecretModeExposure(mode_t mode);

// Checks the file that `flag` names (e.g. "--token-file"). An exposed file: PermissionDenied
// when `strict`, else one WARN line and OK. A missing or unreadable file is OK here: the code
// that reads it reports that with its own context.
Status CheckSecretFile(const std::string& path, std::string_view flag, bool strict);

}  // namespace vigil
