// SPDX-License-Identifier: Apache-2.0
// vigild's composition root: builds the store, collectors, scheduler, sinks, RPC and HTTP
// servers from a DaemonConfig, runs until SIGTERM/SIGINT (SIGHUP reloads the config file), then
// stops everything in order, flushing sinks and removing the unix socket. main.cc only parses
// flags and calls Run(). Called once per process, from the main thread, before any other thread.
#pragma once

#include "daemon/config.h"

namespace vigil::daemon {

// Returns the process exit status: 0 after a clean stop (or a --once run), 1 when the daemon
// could not start (bad config, port in use, refused non-loopback listen without a token).
int Run(const DaemonConfig& config);

}  // namespace vigil::daemon
