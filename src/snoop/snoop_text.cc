// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_text.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "snoop/framework_gap.h"
#include "snoop/snoop_format.h"

namespace vigil::snoop {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string Plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// Cuts the last column of each row so that a line fits `width` (after `indent`).
void FitLastColumn(Rows* rows, size_t indent, size_t width) {
  if (width == 0) {
    return;
  }
  std::vector<size_t> widths;
  for (const auto& row : *rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  for (auto& row : *rows) {
    if (row.empty()) {
      continue;
    }
    size_t used = indent;
    for (size_t c = 0; c + 1 < row.size(); ++c) {
      used += widths[c] + 2;
    }
    row.back() = Ellipsize(row.back(), width > used ? width - used : 4);
  }
}

void AppendRows(Rows rows, std::vector<size_t> right, size_t indent, const TextOptions& o,
                std::string* out) {
  FitLastColumn(&rows, indent, o.width);
  *out += RenderColumns(rows, right, indent);
}

void AppendStack(const CallStack& stack, size_t indent, const TextOptions& o, std::string* out) {
  const size_t shown = std::min(stack.frames.size(), o.max_frames);
  for (size_t i = 0; i < shown; ++i) {
    std::string line = std::string(indent, ' ') + stack.frames[i];
    *out += (o.width > 0 ? Ellipsize(line, o.width) : line) + "\n";
  }
  if (stack.frames.empty()) {
    *out += std::string(indent, ' ') + "(no stack)\n";
  } else if (shown < stack.frames.size()) {
    *out += fmt::format("{}... {} more frames\n", std::string(indent, ' '),
                        stack.frames.size() - shown);
  }
}

void AppendMore(size_t total, size_t shown, size_t indent, const char* what, std::string* out) {
  if (total > shown) {
    *out += fmt::format("{}... {} more {}\n", std::string(indent, ' '), total - shown, what);
  }
}

void AppendMemory(const char* title, const MemoryView& m, const TextOptions& o, std::string* out) {
  *out += fmt::format("  {}: {}, {}, {} outstanding, {} peak\n", title,
                      Plural(m.allocations, "allocation", "allocations"),
                      Plural(m.frees, "free", "frees"), FormatBytes(m.outstanding_bytes),
                      FormatBytes(m.peak_bytes));
  if (m.by_device.size() > 1) {
    for (const DeviceMemory& d : m.by_device) {
      *out += fmt::format("    device {}: {}, {}, {} outstanding, {} peak\n", d.device,
                          Plural(d.allocations, "allocation", "allocations"),
                          Plural(d.frees, "free", "frees"), FormatBytes(d.outstanding_bytes),
                          FormatBytes(d.peak_bytes));
    }
  }
  if (m.mapped_bytes > 0) {
    *out += fmt::format("    mapped (cuMemMap): {}\n", FormatBytes(m.mapped_bytes));
  }
  if (m.host_outstanding_bytes > 0 || m.host_peak_bytes > 0) {
    *out += fmt::format("    pinned host memory: {} outstanding, {} peak\n",
                        FormatBytes(m.host_outstanding_bytes), FormatBytes(m.host_peak_bytes));
  }
  if (!m.leaks.empty()) {
    *out += "    leak candidates (not freed within the leak age), by allocating stack:\n";
    const size_t shown = std::min(m.leaks.size(), o.max_stacks);
    for (size_t i = 0; i < shown; ++i) {
      const LeakGroup& leak = m.leaks[i];
      *out += fmt::format("      {} in {} ({})\n", FormatBytes(leak.bytes),
                          Plural(leak.count, "allocation", "allocations"), leak.api);
      AppendStack(leak.stack, 8, o, out);
    }
    AppendMore(m.leaks.size(), shown, 6, "leak groups", out);
  }
  if (!m.size_histogram.empty()) {
    std::string line = "    sizes:";
    for (const SizeBucket& b : m.size_histogram) {
      line += fmt::format(" <={} x{}", FormatBytes(b.upper_bytes), b.count);
    }
    *out += line + "\n";
  }
}

void AppendProcess(const ProcessSummary& p, const TextOptions& o, std::string* out) {
  *out += fmt::format("pid {} {}{}\n", p.pid, p.command.empty() ? "?" : p.command,
                      p.exited ? " (exited)" : "");
  std::string libraries;
  for (const std::string& lib : p.libraries) {
    libraries += (libraries.empty() ? "" : ", ") + lib;
  }
  *out += "  libraries: " + (libraries.empty() ? std::string("none found") : libraries) + "\n";
  if (!p.python.empty()) *out += "  python: CPython " + p.python + " (Python frames in stacks)\n";

  *out += fmt::format("  launches: {}", p.launches_total);
  if (p.graph_launches > 0) {
    *out += fmt::format(" ({})", Plural(p.graph_launches, "graph launch", "graph launches"));
  }
  *out += "\n";
  Rows rows;
  for (size_t i = 0; i < std::min(p.launches_by_kernel.size(), o.max_rows); ++i) {
    rows.push_back({std::to_string(p.launches_by_kernel[i].count), p.launches_by_kernel[i].name});
  }
  AppendRows(std::move(rows), {0}, 4, o, out);
  AppendMore(p.launches_by_kernel.size(), std::min(p.launches_by_kernel.size(), o.max_rows), 4,
             "kernels", out);

  *out += fmt::format("  syncs: {}, {} blocked\n", Plural(p.syncs_count, "call", "calls"),
                      FormatSeconds(p.syncs_seconds));
  rows.clear();
  for (size_t i = 0; i < std::min(p.syncs_by_api.size(), o.max_rows); ++i) {
    const ApiCalls& a = p.syncs_by_api[i];
    rows.push_back({std::to_string(a.count), FormatSeconds(a.seconds), a.api});
  }
  AppendRows(std::move(rows), {0, 1}, 4, o, out);
  if (!p.syncs_by_stack.empty()) {
    *out += "    by stack:\n";
    const size_t shown = std::min(p.syncs_by_stack.size(), o.max_stacks);
    for (size_t i = 0; i < shown; ++i) {
      const SyncStack& s = p.syncs_by_stack[i];
      *out += fmt::format("      {} in {} ({})\n", FormatSeconds(s.seconds),
                          Plural(s.count, "call", "calls"), s.api);
      AppendStack(s.stack, 8, o, out);
    }
    AppendMore(p.syncs_by_stack.size(), shown, 6, "stacks", out);
  }

  AppendMemory("memory (driver)", p.memory, o, out);
  if (p.has_framework_memory) {
    AppendMemory("memory (caching allocator)", p.framework_memory, o, out);
    std::string line = fmt::format("    held by the driver, not in use by the framework: {}",
                                   FormatBytes(FrameworkGapBytes(p)));
    const std::vector<DeviceGap> gaps = FrameworkGapByDevice(p);
    if (gaps.size() > 1) {
      std::string parts;
      for (const DeviceGap& g : gaps) {
        parts += fmt::format("{}device {}: {}", parts.empty() ? "" : ", ", g.device,
                             FormatBytes(g.bytes));
      }
      line += " (" + parts + ")";
    }
    *out += line + "\n";
  }

  if (p.copies.empty()) {
    *out += "  copies: none\n";
  } else {
    *out += "  copies:\n";
    rows.clear();
    for (size_t i = 0; i < std::min(p.copies.size(), o.max_rows); ++i) {
      const CopyKind& c = p.copies[i];
      rows.push_back({c.kind, std::to_string(c.count), FormatBytes(c.bytes)});
    }
    AppendRows(std::move(rows), {1, 2}, 4, o, out);
    AppendMore(p.copies.size(), std::min(p.copies.size(), o.max_rows), 4, "kinds", out);
  }
}

}  // namespace

std::string RenderSnoopSummary(const SessionSummary& summary, const TextOptions& options) {
  std::string out = fmt::format(
      "vigil snoop: {}, {:.1f}s, {}\n", Plural(summary.processes.size(), "process", "processes"),
      summary.duration_seconds, Plural(summary.events_seen, "event", "events"));
  if (summary.sampled) {
    out += fmt::format("sampled: the event budget was exceeded; {:.1f}% of events recorded\n",
                       summary.sample_ratio * 100);
  }
  if (summary.events_dropped > 0) {
    out +=
        fmt::format("dropped: {} raw events lost to a full ring buffer\n", summary.events_dropped);
  }
  // Said once: the session may already give it as a warning.
  const bool warned = std::any_of(
      summary.warnings.begin(), summary.warnings.end(),
      [](const std::string& w) { return w.find("native frames only") != std::string::npos; });
  if (!summary.python_frames && !warned) {
    out += "stacks: native frames only (no Python frames)\n";
  }
  for (const std::string& warning : summary.warnings) {
    out += "warning: " + warning + "\n";
  }
  for (const ProcessSummary& p : summary.processes) {
    out += "\n";
    AppendProcess(p, options, &out);
  }
  return out;
}

}  // namespace vigil::snoop
