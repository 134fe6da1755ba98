// SPDX-License-Identifier: Apache-2.0
// Plugins: the parts of Vigil that need a heavy library (cpp-httplib with OpenSSL, gRPC with
// protobuf) are shared objects in <prefix>/lib/vigil/, loaded on first use, so a program that
// never uses them never maps those libraries: several MiB of resident memory and milliseconds of
// start-up each. Plugins are built with the programs that load them, so C++ types may cross.
// Owner: base. Thread-safe; a loaded plugin stays loaded.
#pragma once

#include <string>

#include "base/status.h"

namespace vigil {

// <directory of the running program>/../lib/vigil/: bin/ and lib/ side by side, as `cmake
// --install` and the build tree lay them out.
std::string PluginDirectory();

// The address of `symbol` in PluginDirectory() + `file`, loaded once (later calls return the
// first answer). FailedPrecondition naming the file, `what` it provides and dlopen's reason when
// it cannot be loaded.
StatusOr<void*> LoadPluginSymbol(const std::string& file, const std::string& symbol,
                                 const std::string& what);

}  // namespace vigil
