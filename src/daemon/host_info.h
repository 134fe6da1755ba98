// SPDX-License-Identifier: Apache-2.0
// Facts about the host and this run that vigild reports in its status and logs at start:
// hostname, user, and which features are not active here (not root, no GPU backend in this build,
// sinks that arrive later). Pure functions over config and the environment; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config.h"

namespace vigil::daemon {

std::string HostName();
// The user name of `uid`, or its number when it has none.
std::string UserName(unsigned uid);
// "127.0.0.1:1778", "[::1]:1778".
std::string FormatHostPort(const std::string& host, int port);
// The control RPC address to tell others (vigil-fleet): `listening` ("HOST:PORT" as bound) with
// a wildcard host (0.0.0.0, ::, "") replaced by `hostname`; "" when there is no TCP listener.
std::string AdvertisedRpcAddress(const std::string& listening, const std::string& hostname);

// Features `config` asks for (or a full install would have) that this run does not provide.
std::vector<std::string> StaticReducedFeatures(const DaemonConfig& config,
                                               std::span<const std::string_view> collectors);

}  // namespace vigil::daemon
