// SPDX-License-Identifier: Apache-2.0
// A self-contained interactive flame graph page: one HTML file with inline CSS and JS and the
// call tree embedded as JSON (CallTreeJson), no external assets, so it opens offline and can be
// attached to a ticket. Root at the top (icicle layout); click a frame to zoom into it (its
// ancestors stay as full-width bars, click one or "Reset" to zoom out); the search box marks
// every frame whose name contains the text and shows the share of samples under them. The URL
// fragment "#search=TEXT&zoom=NAME" applies both on load (what the page test drives).
// Stateless.
#pragma once

#include <string>

#include "profile/profile.h"

namespace vigil {

// `title` is shown at the top (e.g. "vigil profile: pid 4242, 30 s at 99 Hz").
std::string WriteFlameGraphHtml(const Profile& profile, const std::string& title);

// The embedded JSON: "</" written as "<\/" so no string can close the script element.
std::string EscapeJsonForScript(const std::string& json);

}  // namespace vigil
