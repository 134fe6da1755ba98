// SPDX-License-Identifier: Apache-2.0
// Zero-copy string helpers for parsers of /proc, /sys and text protocols. Views returned point
// into the input; the caller keeps the input alive.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// Splits on `sep`, keeping empty pieces.
std::vector<std::string_view> Split(std::string_view text, char sep);
// Splits on runs of spaces and tabs, dropping empty pieces.
std::vector<std::string_view> SplitWhitespace(std::string_view text);
std::string_view Trim(std::string_view text);
// Pops the next line (without '\n') from *text; false at the end.
bool NextLine(std::string_view* text, std::string_view* line);
// Pops the next whitespace-separated field; false when none is left.
bool NextField(std::string_view* text, std::string_view* field);

std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<uint64_t> ParseUint64(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

std::string Join(const std::vector<std::string>& parts, std::string_view sep);
std::string ToLower(std::string_view text);
// Appends `text` as a quoted JSON string (quotes, backslashes and control characters escaped).
// For writers that stream JSON by hand on hot paths instead of building a document.
void AppendJsonString(std::string_view text, std::string* out);
// `text` with < > & " ' replaced by their HTML entities: safe in element text and quoted
// attributes of the pages Vigil writes.
std::string HtmlEscape(std::string_view text);
// Replaces control characters so untrusted text is safe to log on one line.
std::string SanitizeForLog(std::string_view text, size_t max_len = 200);

}  // namespace vigil
