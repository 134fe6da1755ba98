// SPDX-License-Identifier: Apache-2.0
// The HTML report's GPU timeline of one rank: one lane per (device, stream) over the rank's span,
// kernels and copies as rectangles coloured by class, with lanes for the ProfilerStep ranges, the
// rank's critical path and each device's idle gaps (gaps on the union of its streams). Work
// shorter than one drawing unit of the unzoomed view is merged per lane into one rectangle, and a
// lane draws at most kMaxRectsPerLane rectangles, so the page stays small on any trace; the page
// says when it merged or dropped. Zoom rescales the SVG viewBox (HtmlTimelineScript, inline).
// Owner: trace.
#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "trace/report/html_report.h"
#include "trace/report/html_sections.h"
#include "trace/report/text_report.h"

namespace vigil::trace {
namespace {

constexpr int kUnits = 1500;  // viewBox width of the unzoomed timeline
constexpr size_t kMaxRectsPerLane = 2 * kUnits;
constexpr int kLaneH = 14, kLanePitch = 18;

const char* ClassColor(KernelClass c) {
  switch (c) {
    case KernelClass::kCompute:
      return "#2e7d32";
    case KernelClass::kComm:
      return "#1565c0";
    case KernelClass::kMemory:
      return "#00838f";
    case KernelClass::kOther:
      break;
  }
  return "#8d6e63";
}

struct Counts {
  size_t merged_items = 0;  // items drawn inside a merged rectangle
  size_t merged_rects = 0;
  size_t dropped = 0;  // items not drawn: the lane reached kMaxRectsPerLane
};

// Draws one lane's items (in start order) as rectangles; merges runs of sub-unit items.
class LaneWriter {
 public:
  LaneWriter(int64_t t0, double units_per_ns, int y, std::string_view what, std::string* svg,
             Counts* counts)
      : t0_(t0), k_(units_per_ns), y_(y), what_(what), svg_(svg), counts_(counts) {}
  ~LaneWriter() { Flush(); }

  void Add(int64_t ts, int64_t end, const char* color, std::string_view title) {
    double x = X(ts), w = X(end) - x;
    if (w >= 1) {
      Flush();
      Rect(x, w, color,
           fmt::format("{}: {} at {} us", title, FormatDuration(end - ts), FormatMicros(ts)));
      return;
    }
    if (run_n_ > 0 && x > X(run_end_) + 1) Flush();
    if (run_n_ == 0) {
      run_ts_ = ts;
      run_end_ = end;
      run_title_ = title;
      run_busy_.clear();
    }
    run_end_ = std::max(run_end_, end);
    run_busy_[color] += end - ts;
    ++run_n_;
  }

 private:
  double X(int64_t ns) const { return k_ * static_cast<double>(ns - t0_); }

  void Rect(double x, double w, const char* color, const std::string& title) {
    if (rects_ >= kMaxRectsPerLane) {
      ++counts_->dropped;
      return;
    }
    ++rects_;
    *svg_ += fmt::format(
        R"(<rect x="{:.2f}" y="{}" width="{:.2f}" height="{}" fill="{}"><title>{}</title></rect>)",
        x, y_, std::max(w, 0.5), kLaneH, color, HtmlEscape(title));
  }

  void Flush() {
    if (run_n_ == 0) return;
    if (run_n_ == 1) {
      Rect(X(run_ts_), X(run_end_) - X(run_ts_), run_busy_.begin()->first,
           fmt::format("{}: {} at {} us", run_title_, FormatDuration(run_end_ - run_ts_),
                       FormatMicros(run_ts_)));
    } else {
      // The merged rectangle takes the colour of the class with the most time in it.
      auto top = std::max_element(run_busy_.begin(), run_busy_.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      int64_t busy = 0;
      for (const auto& [c, d] : run_busy_) busy += d;
      Rect(X(run_ts_), X(run_end_) - X(run_ts_), top->first,
           fmt::format("{} merged {}: {} in {} from {} us", run_n_, what_, FormatDuration(busy),
                       FormatDuration(run_end_ - run_ts_), FormatMicros(run_ts_)));
      counts_->merged_items += run_n_;
      ++counts_->merged_rects;
    }
    run_n_ = 0;
  }

  int64_t t0_;
  double k_;
  int y_;
  std::string_view what_;
  std::string* svg_;
  Counts* counts_;
  size_t rects_ = 0;
  size_t run_n_ = 0;
  int64_t run_ts_ = 0, run_end_ = 0;
  std::string run_title_;
  std::map<const char*, int64_t> run_busy_;
};

struct Lane {
  std::string label;
  std::vector<size_t> items;  // view indices, in start order
};

}  // namespace

std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> DeviceIdleGaps(const RankReport& r) {
  const GpuView& v = r.view;
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> busy, gaps;
  for (size_t i = 0; i < v.size(); ++i) {
    busy[r.trace->events.device[v.row[i]]].emplace_back(v.ts[i] * r.unit_ns, v.end(i) * r.unit_ns);
  }
  for (auto& [device, spans] : busy) {
    std::sort(spans.begin(), spans.end());
    std::vector<std::pair<int64_t, int64_t>>& out = gaps[device];
    int64_t end = spans.front().second;
    for (const auto& [s, e] : spans) {
      if (s > end) out.emplace_back(end, s);
      end = std::max(end, e);
    }
  }
  return gaps;
}

void HtmlGpuTimeline(const RankReport& r, std::string* h) {
  const GpuView& v = r.view;
  const RankTrace& t = *r.trace;
  const CriticalPath& cp = r.critical_path;
  if (v.size() == 0) return;
  const int64_t u = r.unit_ns;
  // Lanes: one per (device, stream), in that order.
  std::map<std::pair<int32_t, int64_t>, Lane> streams;
  int64_t t0 = v.ts[0] * u, t1 = t0;
  for (size_t i = 0; i < v.size(); ++i) {
    streams[{t.events.device[v.row[i]], v.stream_of(i)}].items.push_back(i);
    t0 = std::min(t0, v.ts[i] * u);
    t1 = std::max(t1, v.end(i) * u);
  }
  for (const StepReport& s : r.steps) t0 = std::min(t0, s.ts), t1 = std::max(t1, s.ts + s.dur);
  for (uint32_t row : cp.rows) {
    t0 = std::min(t0, t.events.ts[row]);
    t1 = std::max(t1, t.events.end(row));
  }
  if (t1 <= t0) t1 = t0 + 1;
  const double k = static_cast<double>(kUnits) / static_cast<double>(t1 - t0);

  std::vector<std::string> labels;
  std::string svg;
  Counts counts;
  auto next_y = [&](std::string label) {
    labels.push_back(std::move(label));
    return static_cast<int>(labels.size() - 1) * kLanePitch + 2;
  };
  // Steps: alternating bands, with boundaries drawn across every lane afterwards.
  if (!r.steps.empty()) {
    LaneWriter lane(t0, k, next_y("steps"), "steps", &svg, &counts);
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const StepReport& s = r.steps[i];
      lane.Add(s.ts, s.ts + s.dur, i % 2 ? "#bdbdbd" : "#9e9e9e",
               fmt::format("ProfilerStep#{}", s.number));
    }
  }
  if (!cp.rows.empty()) {
    LaneWriter lane(t0, k, next_y("critical path"), "critical path events", &svg, &counts);
    for (uint32_t row : cp.rows) {
      bool gpu = t.events.stream[row] >= 0;
      lane.Add(t.events.ts[row], t.events.end(row), gpu ? "#6a1b9a" : "#ef6c00",
               fmt::format("{} ({})", t.strings.Get(t.events.name[row]).substr(0, 120),
                           gpu ? "GPU" : "CPU"));
    }
  }
  for (const auto& [device, gaps] : DeviceIdleGaps(r)) {
    LaneWriter lane(t0, k, next_y(fmt::format("GPU {} idle", device)), "idle gaps", &svg, &counts);
    for (const auto& [s, e] : gaps) lane.Add(s, e, "#e57373", "idle on every stream");
  }
  for (const auto& [key, lane_items] : streams) {
    LaneWriter lane(t0, k, next_y(fmt::format("GPU {} stream {}", key.first, key.second)),
                    "kernels", &svg, &counts);
    for (size_t i : lane_items.items) {
      lane.Add(v.ts[i] * u, v.end(i) * u, ClassColor(v.cls[i]),
               t.strings.Get(v.name_of(i)).substr(0, 120));
    }
  }
  const int height = static_cast<int>(labels.size()) * kLanePitch + 2;
  for (const StepReport& s : r.steps) {
    svg += fmt::format(
        R"(<line x1="{0:.2f}" x2="{0:.2f}" y1="0" y2="{1}" stroke="#616161" stroke-dasharray="3 3" vector-effect="non-scaling-stroke"/>)",
        k * static_cast<double>(s.ts - t0), height);
  }

  *h += "<h3>GPU timeline</h3><div class=tl>";
  *h += fmt::format(
      "<div class=tl-bar><button class=tl-in>+</button><button class=tl-out>&minus;</button>"
      "<button class=tl-reset>reset</button> <span class=tl-win></span> (wheel zooms, drag "
      "pans)</div><div class=tl-body><div class=tl-labels>");
  for (const std::string& l : labels) *h += "<div>" + HtmlEscape(l) + "</div>";
  *h += fmt::format(
      R"(</div><svg class=tl-svg viewBox="0 0 {0} {1}" width="100%" height="{1}" preserveAspectRatio="none" data-w="{0}" data-h="{1}" data-ns-per-unit="{2:.6g}" data-t0-us="{3}">)",
      kUnits, height, 1.0 / k, FormatMicros(t0));
  *h += svg + "</svg></div><div class=legend>";
  for (KernelClass c :
       {KernelClass::kCompute, KernelClass::kComm, KernelClass::kMemory, KernelClass::kOther}) {
    *h += fmt::format(R"(<span><i class=sw style="background:{}"></i>{}</span>)", ClassColor(c),
                      KernelClassName(c));
  }
  *h +=
      "<span><i class=sw style=\"background:#6a1b9a\"></i>critical path (GPU)</span>"
      "<span><i class=sw style=\"background:#ef6c00\"></i>critical path (CPU)</span>"
      "<span><i class=sw style=\"background:#e57373\"></i>idle on every stream</span></div>";
  *h += fmt::format("<p class=tl-note>Starts at {} us (trace clock).", FormatMicros(t0));
  if (counts.merged_items > 0) {
    *h += fmt::format(
        " Merged {} items shorter than 1/{} of the span into {} rectangles (one per run on a "
        "lane; zooming does not split them; --json or a Perfetto trace has every event).",
        counts.merged_items, kUnits, counts.merged_rects);
  }
  if (counts.dropped > 0) {
    *h += fmt::format(" {} rectangles not drawn: a lane draws at most {}.", counts.dropped,
                      kMaxRectsPerLane);
  }
  *h += "</p></div>";
}

std::string_view HtmlTimelineScript() {
  return R"(<script>
document.querySelectorAll('.tl').forEach(function(tl){
var svg=tl.querySelector('svg'),full=+svg.dataset.w,h=+svg.dataset.h,ns=+svg.dataset.nsPerUnit;
var win=tl.querySelector('.tl-win'),x=0,w=full,drag=null;
function ms(u){return (u*ns/1e6).toFixed(3)+' ms';}
function set(nx,nw){nw=Math.min(full,Math.max(full/1e5,nw));nx=Math.min(full-nw,Math.max(0,nx));
x=nx;w=nw;svg.setAttribute('viewBox',x+' 0 '+w+' '+h);
win.textContent='showing '+ms(x)+' to '+ms(x+w)+' after the start';}
function zoom(f,c){set(c-(c-x)*f,w*f);}
tl.querySelector('.tl-in').onclick=function(){zoom(0.5,x+w/2);};
tl.querySelector('.tl-out').onclick=function(){zoom(2,x+w/2);};
tl.querySelector('.tl-reset').onclick=function(){set(0,full);};
svg.addEventListener('wheel',function(e){e.preventDefault();var r=svg.getBoundingClientRect();
zoom(e.deltaY<0?0.8:1.25,x+w*(e.clientX-r.left)/r.width);},{passive:false});
svg.addEventListener('mousedown',function(e){drag={c:e.clientX,x:x};e.preventDefault();});
window.addEventListener('mouseup',function(){drag=null;});
window.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect();
set(drag.x-(e.clientX-drag.c)*w/r.width,w);});
set(0,full);});
</script>)";
}

}  // namespace vigil::trace
