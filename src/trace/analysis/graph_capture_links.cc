// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/graph_capture_links.h"

#include <algorithm>
#include <charconv>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "trace/model/linker.h"

namespace vigil::trace {
namespace {

struct ExecuteWindow {
  int64_t ts = 0, end = 0;
  int64_t batch = -1;
  uint32_t graphs = 0;  // graph launches inside
};

std::vector<ExecuteWindow> ExecuteWindows(const RankTrace& t) {
  const EventTable& e = t.events;
  std::vector<ExecuteWindow> out;
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kUserAnnotation) continue;
    const int64_t batch = ExecuteAnnotationBatch(t.strings.Get(e.name[i]));
    if (batch >= 0) out.push_back({e.ts[i], e.end(i), batch, 0});
  }
  std::sort(out.begin(), out.end(),
            [](const ExecuteWindow& a, const ExecuteWindow& b) { return a.ts < b.ts; });
  return out;
}

// The window holding `ts`, or nullptr.
template <typename Windows>
auto* WindowAt(Windows& w, int64_t ts) {
  auto it = std::upper_bound(w.begin(), w.end(), ts,
                             [](int64_t x, const ExecuteWindow& a) { return x < a.ts; });
  if (it == w.begin() || ts >= std::prev(it)->end) return static_cast<decltype(&*it)>(nullptr);
  return &*std::prev(it);
}

// Files in the order they should be tried for a replay inside `window`.
std::vector<uint32_t> FileOrder(const GraphCaptures& c, const ExecuteWindow* window) {
  std::vector<uint32_t> order(c.files.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (window == nullptr) return order;
  const std::string_view mode = window->graphs > 1 ? "PIECEWISE" : "FULL";
  auto rank = [&](uint32_t i) {
    const CaptureFile& f = *c.files[i];
    // Large enough batch sizes first, smallest first; then unknown ones; too small last.
    const int64_t fit = f.batch_size < 0 ? 1 : f.batch_size >= window->batch ? 0 : 2;
    return std::tuple(fit, fit == 0 ? f.batch_size : 0, f.mode == mode ? 0 : 1, i);
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return rank(a) < rank(b); });
  return order;
}

struct Match {
  uint32_t file;
  uint32_t root;
  Alignment alignment;
};

uint64_t Hash(const std::vector<AlignItem>& items) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ULL; };
  for (const AlignItem& i : items) {
    mix(static_cast<uint64_t>(i.kind));
    mix(std::hash<std::string_view>{}(i.name));
    mix(static_cast<uint64_t>(i.stream));
  }
  mix(items.size());
  return h;
}

}  // namespace

int64_t ExecuteAnnotationBatch(std::string_view name) {
  constexpr std::string_view kPrefix = "execute_";
  if (name.substr(0, kPrefix.size()) != kPrefix) return -1;
  std::string_view rest = name.substr(kPrefix.size());
  if (rest.substr(0, 8) == "context_") {
    int64_t sum = 0;
    bool any = false;
    for (size_t open = rest.find('('); open != std::string_view::npos;
         open = rest.find('(', open + 1)) {
      size_t close = rest.find(')', open);
      if (close == std::string_view::npos) break;
      // "(1_2)" counts 1 + 2; anything else in the parentheses is not a count list.
      std::string_view inside = rest.substr(open + 1, close - open - 1);
      for (size_t p = 0; p <= inside.size();) {
        size_t q = inside.find('_', p);
        if (q == std::string_view::npos) q = inside.size();
        int64_t v = 0;
        auto [ptr, ec] = std::from_chars(inside.data() + p, inside.data() + q, v);
        if (ec != std::errc() || ptr != inside.data() + q) return -1;
        sum += v;
        any = true;
        p = q + 1;
      }
    }
    return any ? sum : -1;
  }
  int64_t batch = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), batch);
  if (ec != std::errc() ||
      std::string_view(ptr, rest.data() + rest.size()).substr(0, 9) != "_context_") {
    return -1;
  }
  return batch;
}

GraphCaptureLinks LinkGraphCaptures(const RankTrace& t, const GpuView& v,
                                    const GraphCaptures& captures) {
  GraphCaptureLinks out;
  out.captures = &captures;
  const EventTable& e = t.events;
  if (t.links.graph_launches.empty() || t.links.launcher.empty()) return out;
  // The view rows of each graph launch, in GPU start order.
  std::unordered_map<uint32_t, std::vector<uint32_t>> replays;
  std::vector<uint32_t> launch_order;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v.is_kernel[i]) continue;
    const uint32_t launcher = t.links.launcher[v.row[i]];
    if (launcher == kNoIndex || !IsGraphLaunchName(t.strings.Get(e.name[launcher]))) continue;
    auto [it, inserted] = replays.try_emplace(launcher);
    if (inserted) launch_order.push_back(launcher);
    it->second.push_back(static_cast<uint32_t>(i));
  }
  if (replays.empty()) return out;
  std::sort(launch_order.begin(), launch_order.end(),
            [&](uint32_t a, uint32_t b) { return e.ts[a] != e.ts[b] ? e.ts[a] < e.ts[b] : a < b; });
  std::vector<ExecuteWindow> windows = ExecuteWindows(t);
  for (uint32_t launch : launch_order) {
    if (ExecuteWindow* w = WindowAt(windows, e.ts[launch])) ++w->graphs;
  }
  out.of_view_row.assign(v.size(), CaptureLink{});
  // Per (kernel sequence, preferred file order): the windows it aligns with, and how many
  // replays of it have been assigned so far.
  struct Candidates {
    std::vector<Match> matches;
    size_t next = 0;
  };
  std::map<std::pair<uint64_t, std::vector<uint32_t>>, Candidates> cache;
  for (uint32_t launch : launch_order) {
    std::vector<uint32_t>& rows = replays[launch];
    std::stable_sort(rows.begin(), rows.end(),
                     [&](uint32_t a, uint32_t b) { return v.ts[a] < v.ts[b]; });
    std::vector<AlignItem> items;
    items.reserve(rows.size());
    for (uint32_t i : rows)
      items.push_back(ReplayItem(t.strings.Get(v.name_of(i)), v.stream_of(i)));
    ++out.summary.graph_launches;
    out.summary.replayed_events += rows.size();
    std::vector<uint32_t> order =
        FileOrder(captures, WindowAt(std::as_const(windows), e.ts[launch]));
    auto [it, inserted] = cache.try_emplace({Hash(items), order});
    Candidates& c = it->second;
    if (inserted) {
      for (uint32_t f : order) {
        const CaptureFile& file = *captures.files[f];
        for (uint32_t r = 0; r < file.roots.size(); ++r) {
          Alignment a = AlignCaptureToReplay(file.roots[r].items, items);
          if (a.ok()) c.matches.push_back(Match{f, r, std::move(a)});
        }
        if (!c.matches.empty()) break;  // the most preferred file that has the graph
      }
    }
    if (c.matches.empty()) continue;
    const Match& m = c.matches[c.next++ % c.matches.size()];
    const CaptureRoot& root = captures.files[m.file]->roots[m.root];
    ++out.summary.matched_launches;
    ++out.summary.by_method[m.alignment.method];
    for (size_t k = 0; k < rows.size(); ++k) {
      out.of_view_row[rows[k]] =
          CaptureLink{m.file, root.launches[m.alignment.capture_of[k]], launch};
    }
    out.summary.linked_events += rows.size();
  }
  return out;
}

}  // namespace vigil::trace
