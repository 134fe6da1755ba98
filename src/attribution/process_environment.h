// SPDX-License-Identifier: Apache-2.0
// The one place that reads another process's environment: <proc>/<pid>/environ, keeping only
// the variables on the operator's allow-list (an empty list reads nothing at all). Size-capped;
// a refusal (another user's process without CAP_SYS_PTRACE) reads as an empty environment.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace vigil {

std::map<std::string, std::string> ReadAllowedEnvironment(
    const std::string& proc_root, int pid, const std::vector<std::string>& allow_list);

}  // namespace vigil
