// SPDX-License-Identifier: Apache-2.0
// What vigild's HTTP root answers: a small page that names the daemon and links to what it
// serves, as node_exporter's root does, so someone who opens the port in a browser finds
// /metrics and the API instead of a JSON 404.
#pragma once

#include <string>
#include <string_view>

namespace vigil {

// A self-contained HTML page (no external assets); `host` is escaped.
std::string LandingPageHtml(std::string_view host);

}  // namespace vigil
