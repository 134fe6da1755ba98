// SPDX-License-Identifier: Apache-2.0
// Small pieces every vigil-fleet HTTP handler shares: Status -> HTTP code, JSON replies in the
// {"error": "..."} convention and the common query parameters (since/until/limit). Route files
// (fleet_server.cc and the others that register routes) use them so every endpoint answers
// alike. Owner: fleet. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace vigil {

int HttpCode(const Status& s);
void ReplyJson(httplib::Response& res, int code, const nlohmann::json& body);
void ReplyError(httplib::Response& res, int code, const std::string& message);
// 200 with the value, or the error with HttpCode(status).
void Reply(httplib::Response& res, const StatusOr<nlohmann::json>& result);

// "7d" (back from now), a unix time in seconds, or "" (fallback).
StatusOr<int64_t> TimeParam(const httplib::Request& req, const char* name, int64_t now_ns,
                            int64_t fallback_ns);
// ?limit=N, 1..10000, default 100.
int64_t LimitParam(const httplib::Request& req);

}  // namespace vigil
