// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_endpoint.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <httplib.h>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil {

std::string DefaultFleetUrl() {
  const char* env = std::getenv("VIGIL_FLEET_URL");
  return env && *env ? env : "http://127.0.0.1:9480";
}

StatusOr<std::string> ReadFleetToken(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, 1 << 16));
  std::string_view rest = text, line;
  while (NextLine(&rest, &line)) {
    line = Trim(line.substr(0, line.find('#')));
    if (!line.empty()) return std::string(SplitWhitespace(line).back());
  }
  return InvalidArgumentError("token file " + path + ": no token");
}

int CallFleet(CliContext& ctx, const std::string& url_flag, const std::string& token_file,
              const FleetCall& call, nlohmann::json* reply) {
  const std::string url = url_flag.empty() ? DefaultFleetUrl() : url_flag;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    std::fprintf(stderr, "vigil: %s: --fleet must be http[s]://HOST:PORT, got %s\n", call.what,
                 url.c_str());
    return kExitUsage;
  }
  httplib::Client client(url);
  const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::nanoseconds(ctx.TimeoutNs()));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  httplib::Headers headers;
  if (!token_file.empty()) {
    StatusOr<std::string> token = ReadFleetToken(token_file);
    if (!token.ok()) return ctx.Fail(token.status(), call.what);
    headers.emplace("Authorization", "Bearer " + *token);
  }
  const std::string path = httplib::append_query_params(call.path, call.params);
  httplib::Result res = std::string_view(call.method) == "POST"
                            ? client.Post(path, headers, call.body, "application/json")
                            : client.Get(path, headers);
  if (!res) {
    std::fprintf(stderr, "vigil: %s: cannot reach vigil-fleet at %s: %s\n", call.what, url.c_str(),
                 httplib::to_string(res.error()).c_str());
    return kExitUnreachable;
  }
  *reply = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status / 100 != 2 || reply->is_discarded()) {
    const std::string why = !reply->is_discarded() && reply->contains("error")
                                ? (*reply)["error"].get<std::string>()
                                : SanitizeForLog(res->body);
    std::fprintf(stderr, "vigil: %s: HTTP %d: %s\n", call.what, res->status, why.c_str());
    return res->status == 400 ? kExitUsage : kExitFailure;
  }
  return kExitOk;
}

}  // namespace vigil
