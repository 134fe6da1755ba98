// SPDX-License-Identifier: Apache-2.0
#include "sinks/fleet_url.h"

#include <algorithm>
#include <utility>

#include "base/time_util.h"

namespace vigil {

StatusOr<FleetEndpoint> FleetEndpointFor(const std::string& url, std::string_view route,
                                         std::string_view what) {
  const size_t scheme = url.find("://");
  const std::string name = scheme == std::string::npos ? "" : url.substr(0, scheme);
  if ((name != "http" && name != "https") || url.size() == scheme + 3) {
    return InvalidArgumentError(std::string(what) +
                                ": fleet URL must be http[s]://HOST:PORT[/path], got " + url);
  }
  const size_t slash = url.find('/', scheme + 3);
  FleetEndpoint out;
  out.base_url = url.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  if (const size_t api = prefix.find("/api/v1"); api != std::string::npos) {
    prefix.resize(api);
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  out.path = prefix + "/api/v1/" + std::string(route);
  return out;
}

HttpRequest FleetPost(const std::string& base_url, std::string path_and_query, std::string body,
                      std::string content_type, const std::string& token,
                      const std::string& ca_file, int64_t timeout_ns) {
  HttpRequest request{.base_url = base_url,
                      .method = "POST",
                      .path = std::move(path_and_query),
                      .body = std::move(body),
                      .content_type = std::move(content_type),
                      .timeout_ns = timeout_ns,
                      .connect_timeout_ns = std::min<int64_t>(timeout_ns, 10 * kNanosPerSecond),
                      .ca_file = ca_file};
  if (!token.empty()) request.headers.emplace_back("Authorization", "Bearer " + token);
  return request;
}

}  // namespace vigil
