// SPDX-License-Identifier: Apache-2.0
#include "daemon/landing_page.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "base/version.h"

namespace vigil {
namespace {

struct Link {
  const char* href;
  const char* what;
};

constexpr Link kLinks[] = {
    {"/metrics", "every series in the Prometheus text format (scrape this)"},
    {"/api/v1/status", "collectors, sinks, reduced features and registered processes (JSON)"},
    {"/api/v1/latest?selector=vigil_collector_success",
     "the latest point of the series a selector matches (JSON)"},
    {"/api/v1/range?selector=vigil_host_load1", "the in-memory history of a selector (JSON)"},
    {"/api/v1/profiles", "continuous CPU profiles per job, when --profile.continuous is on"},
    {"/healthz", "ok once the first collection is done, else the reason (503)"},
};

}  // namespace

std::string LandingPageHtml(std::string_view host) {
  std::string items;
  for (const Link& l : kLinks) {
    items += fmt::format("<li><a href=\"{}\">{}</a> &mdash; {}</li>\n", HtmlEscape(l.href),
                         HtmlEscape(l.href), HtmlEscape(l.what));
  }
  const std::string title =
      host.empty() ? std::string("vigild") : fmt::format("vigild on {}", HtmlEscape(host));
  return fmt::format(
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title>"
      "<style>body{{font-family:sans-serif;max-width:50em;margin:2em auto;line-height:1.5}}"
      "code{{background:#eee;padding:0 .2em}}</style></head>\n<body>\n<h1>{0}</h1>\n"
      "<p>Vigil's host daemon {1}: host, GPU and job telemetry, and Kineto traces on demand.</p>\n"
      "<ul>\n{2}</ul>\n<p>From a shell: <code>vigil status</code>, <code>vigil top</code>, "
      "<code>vigil metrics</code>.</p>\n</body></html>\n",
      title, kVersion, items);
}

}  // namespace vigil
