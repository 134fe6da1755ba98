// SPDX-License-Identifier: Apache-2.0
#include "cli/fleet_endpoint.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

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

void PrintFleetUnreachable(FILE* err, const char* what, const std::string& url,
                           const std::string& why) {
  std::fprintf(err,
               "vigil: %s: cannot reach vigil-fleet at %s (%s). Is it running? Start it with "
               "`vigil-fleet serve --listen HOST:PORT` (default 127.0.0.1:9480) on the fleet "
               "host, or point vigil at a running one with --fleet-url URL or $VIGIL_FLEET_URL.\n",
               what, url.c_str(), why.c_str());
}

int CallFleet(CliContext& ctx, const std::string& url_flag, const std::string& token_file,
              const FleetCall& call, nlohmann::json* reply) {
  const std::string url = url_flag.empty() ? DefaultFleetUrl() : url_flag;
  if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
    std::fprintf(stderr, "vigil: %s: --fleet-url must be http[s]://HOST:PORT, got %s\n", call.what,
                 url.c_str());
    return kExitUsage;
  }
  HttpRequest request;
  request.base_url = url;
  request.method = call.method;
  request.path = WithQuery(call.path, call.params);
  request.body = call.body;
  request.timeout_ns = ctx.TimeoutNs();
  if (!token_file.empty()) {
    StatusOr<std::string> token = ReadFleetToken(token_file);
    if (!token.ok()) return ctx.Fail(token.status(), call.what);
    request.headers.emplace_back("Authorization", "Bearer " + *token);
  }
  StatusOr<HttpReply> res = HttpExchange(request);
  if (!res.ok()) {
    if (res.status().code() != StatusCode::kUnavailable) {
      ctx.Fail(res.status(), call.what);
      return res.status().code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
    }
    PrintFleetUnreachable(stderr, call.what, url, res.status().message());
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
