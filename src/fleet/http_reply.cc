// SPDX-License-Identifier: Apache-2.0
#include "fleet/http_reply.h"

#include <algorithm>
#include <optional>

#include <httplib.h>

#include "base/strings.h"
#include "base/time_util.h"

namespace vigil {

using nlohmann::json;

namespace {
// The last second whose nanoseconds fit int64 (year 2262), rounded down.
constexpr int64_t kMaxUnixSeconds = 9'200'000'000;
}  // namespace

int HttpCode(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kResourceExhausted:
      return 413;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

void ReplyJson(httplib::Response& res, int code, const json& body) {
  res.status = code;
  res.set_content(body.dump(), "application/json");
}

void ReplyError(httplib::Response& res, int code, const std::string& message) {
  ReplyJson(res, code, json{{"error", message}});
}

void Reply(httplib::Response& res, const StatusOr<json>& result) {
  if (result.ok()) {
    ReplyJson(res, 200, *result);
  } else {
    ReplyError(res, HttpCode(result.status()), result.status().message());
  }
}

// "7d" (back from now), a unix time in seconds, or "" (fallback).
StatusOr<int64_t> TimeParam(const httplib::Request& req, const char* name, int64_t now_ns,
                            int64_t fallback_ns) {
  if (!req.has_param(name) || req.get_param_value(name).empty()) {
    return fallback_ns;
  }
  const std::string text = req.get_param_value(name);
  if (text.find_first_not_of("0123456789") == std::string::npos && text.size() >= 9) {
    // 20 digits do not fit int64 and 11 overflow as nanoseconds: both are a clear 400.
    const std::optional<int64_t> seconds = ParseInt64(text);
    if (!seconds || *seconds > kMaxUnixSeconds) {
      return InvalidArgumentError(std::string(name) + ": unix seconds past " +
                                  std::to_string(kMaxUnixSeconds));
    }
    return *seconds * kNanosPerSecond;
  }
  StatusOr<int64_t> d = ParseDuration(text);
  if (!d.ok()) {
    return InvalidArgumentError(std::string(name) + ": want a duration like 7d or unix seconds");
  }
  // Further back than 1970 is 1970: queries subtract times, which must stay non-negative.
  return *d > now_ns ? 0 : now_ns - *d;
}

int64_t LimitParam(const httplib::Request& req) {
  if (!req.has_param("limit")) return 100;
  const std::optional<int64_t> v = ParseInt64(req.get_param_value("limit"));
  return v && *v > 0 ? std::min<int64_t>(*v, 10000) : 100;
}

}  // namespace vigil
