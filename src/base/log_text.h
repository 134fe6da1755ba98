// SPDX-License-Identifier: Apache-2.0
// How a log message's text is escaped on its way out. LogMessage (base/logging.h) applies it to
// every message, so text from clients (job ids, paths, socket names, HTTP targets) can never
// forge a log line, rewrite one or send escape sequences to an operator's terminal, whether or
// not the call site sanitised it. Owner: base. Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace vigil {

// \n, \r and \t become those two-character escapes; other control bytes (0x00-0x1f, 0x7f)
// become \xNN, or \u00NN when `json` (which also escapes '"' and '\\'). Bytes from 0x80 up pass
// unchanged (UTF-8).
std::string EscapeLogText(std::string_view message, bool json);

}  // namespace vigil
