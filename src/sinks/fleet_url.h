// SPDX-License-Identifier: Apache-2.0
// Where an upload to vigil-fleet goes, from the URL given to --fleet-url: the scheme, host and
// port to connect to, and the route's path beside the API prefix. The URL may name the ingest
// path (http://fleet:9480/api/v1/ingest) or a path prefix behind a proxy
// (https://gw/fleet/api/v1/ingest -> /fleet/api/v1/<route>); and the POST that goes there. Shared
// by the fleet push sink and the trace and CPU profile uploaders. Stateless.
#pragma once

#include <string>
#include <string_view>

#include "base/http_exchange.h"
#include "base/status.h"

namespace vigil {

struct FleetEndpoint {
  std::string base_url;  // scheme://host[:port]
  std::string path;      // [prefix]/api/v1/<route>
};

// InvalidArgument (prefixed with `what`) for a URL that is not http[s]://HOST[:PORT][/path].
StatusOr<FleetEndpoint> FleetEndpointFor(const std::string& url, std::string_view route,
                                         std::string_view what);

// A POST of `body` to base_url + path_and_query: `Authorization: Bearer token` when a token is
// set, `ca_file` for https, each read and write within timeout_ns and the connect within the
// smaller of it and 10 s.
HttpRequest FleetPost(const std::string& base_url, std::string path_and_query, std::string body,
                      std::string content_type, const std::string& token,
                      const std::string& ca_file, int64_t timeout_ns);

}  // namespace vigil
