// SPDX-License-Identifier: Apache-2.0
#include "trace/report/cpu_profile_report.h"

#include <fmt/format.h>

#include "trace/report/html_report.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

constexpr size_t kTextRows = 5;

double Pct(uint64_t part, uint64_t whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::string Window(const CpuProfileSummary& p) {
  if (p.overlap_seconds < 0) {
    return fmt::format("{:.1f} s (the trace has no Unix clock to compare it with)",
                       p.profile_seconds);
  }
  return fmt::format("{:.1f} s, {:.1f} s of it inside the trace's {:.1f} s{}", p.profile_seconds,
                     p.overlap_seconds, p.trace_seconds,
                     p.overlap_seconds <= 0 ? ": NOT the trace's window" : "");
}

void WriteFunctions(std::string_view key, const std::vector<CpuFunction>& functions,
                    uint64_t samples, JsonWriter* w) {
  w->Key(key).BeginArray();
  for (const CpuFunction& f : functions) {
    w->BeginObject().Field("function", f.label).Field("self", f.self).Field("total", f.total);
    w->Field("self_pct", Pct(f.self, samples)).Field("total_pct", Pct(f.total, samples));
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

void WriteCpuProfileJson(const RankReport& r, JsonWriter* w) {
  const CpuProfileSummary& p = r.cpu_profile;
  if (!p.computed) return;
  w->Key("cpu_profile").BeginObject();
  w->Field("path", p.path).Field("event", p.event).Field("frequency_hz", int64_t{p.frequency_hz});
  w->Field("samples", p.samples).Field("python_samples", p.python_samples);
  w->Field("gil_samples", p.gil_samples);
  w->Field("profile_s", p.profile_seconds).Field("trace_s", p.trace_seconds);
  w->Field("overlap_s", p.overlap_seconds);
  WriteFunctions("top_self", p.top_self, p.samples, w);
  WriteFunctions("top_total", p.top_total, p.samples, w);
  w->EndObject();
}

void RenderCpuProfileText(const RankReport& r, const TextOptions&, std::string* out) {
  const CpuProfileSummary& p = r.cpu_profile;
  if (!p.computed) return;
  *out += fmt::format("  host CPU profile: {} samples ({} at {} Hz) over {}\n", p.samples, p.event,
                      p.frequency_hz, Window(p));
  for (size_t i = 0; i < std::min(kTextRows, p.top_self.size()); ++i) {
    const CpuFunction& f = p.top_self[i];
    *out += fmt::format("    {:>5.1f}% self {:>5.1f}% total  {}\n", Pct(f.self, p.samples),
                        Pct(f.total, p.samples), f.label);
  }
}

void RenderCpuProfileHtml(const RankReport& r, std::string* h) {
  const CpuProfileSummary& p = r.cpu_profile;
  if (!p.computed) return;
  *h += "<h3>Host CPU profile</h3>";
  *h += fmt::format("<p>{} samples ({} at {} Hz) over {}.</p>", p.samples, HtmlEscape(p.event),
                    p.frequency_hz, HtmlEscape(Window(p)));
  *h += "<table><tr><th>function</th><th class=num>self</th><th class=num>total</th></tr>";
  for (const CpuFunction& f : p.top_self) {
    *h += fmt::format("<tr><td>{}</td><td class=num>{:.1f}%</td><td class=num>{:.1f}%</td></tr>",
                      HtmlEscape(f.label), Pct(f.self, p.samples), Pct(f.total, p.samples));
  }
  *h += "</table>";
}

}  // namespace vigil::trace
