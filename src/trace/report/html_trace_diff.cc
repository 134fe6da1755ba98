// SPDX-License-Identifier: Apache-2.0
// The HTML section of --diff: GPU time per kernel category and the operators that changed most.
#include <fmt/format.h>

#include "trace/report/html_report.h"
#include "trace/report/op_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

std::string SignedDuration(int64_t ns) {
  std::string s = FormatDuration(ns);
  if (ns >= 0) s.insert(s.begin(), '+');
  return s;
}

}  // namespace

std::string HtmlTraceDiff(const TraceDiff& d) {
  std::string h = fmt::format("<h2>Diff: {} {} &rarr; {} {}</h2>", HtmlEscape(d.base_device),
                              HtmlEscape(d.base_runtime), HtmlEscape(d.test_device),
                              HtmlEscape(d.test_runtime));
  h += "<table><tr><th>GPU time by category</th><th class=num>base</th><th "
       "class=num>test</th><th class=num>delta</th><th class=num>events</th></tr>";
  for (const CategoryDelta& c : d.categories) {
    h += fmt::format(
        "<tr><td>{}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td><td "
        "class=num>{} &rarr; {}</td></tr>",
        KernelCategoryName(c.category), FormatDuration(c.base_ns), FormatDuration(c.test_ns),
        SignedDuration(c.test_ns - c.base_ns), c.base_count, c.test_count);
  }
  h += "</table>";
  h += fmt::format(
      "<p>GPU work matched by kernel category and launching operator: {} matched, {} only in "
      "base, {} only in test.</p>",
      d.operators_matched, d.operators_base_only, d.operators_test_only);
  h += "<table><tr><th>category</th><th>operator</th><th class=num>base</th><th "
       "class=num>test</th><th class=num>delta</th><th class=num>events</th></tr>";
  for (const OperatorDelta& o : d.operators) {
    h += fmt::format(
        "<tr><td>{}</td><td><code>{}</code></td><td class=num>{}</td><td class=num>{}</td><td "
        "class=num>{}</td><td class=num>{} &rarr; {}</td></tr>",
        KernelCategoryName(o.category), o.op.empty() ? "(no operator)" : HtmlEscape(o.op),
        FormatDuration(o.base_ns), FormatDuration(o.test_ns), SignedDuration(o.test_ns - o.base_ns),
        o.base_count, o.test_count);
  }
  return h + "</table>";
}

}  // namespace vigil::trace
