// SPDX-License-Identifier: Apache-2.0
#include "profile/flamegraph_html.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "profile/json_output.h"

namespace vigil {
namespace {

constexpr char kHead[] = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>TITLE</title>
<style>
body { font: 12px system-ui, sans-serif; margin: 0; background: #fafafa; color: #222; }
header { padding: 8px 12px; border-bottom: 1px solid #ddd; display: flex; gap: 12px;
         align-items: center; flex-wrap: wrap; }
header h1 { font-size: 14px; margin: 0; font-weight: 600; }
#info, #matched { color: #555; }
#chart { position: relative; margin: 8px 12px; overflow: hidden; }
.frame { position: absolute; height: 17px; line-height: 17px; overflow: hidden;
         white-space: nowrap; text-overflow: ellipsis; box-sizing: border-box;
         border: 1px solid rgba(255,255,255,0.6); padding: 0 3px; cursor: pointer;
         font: 11px ui-monospace, monospace; }
.frame:hover { border-color: #000; }
.frame.ancestor { opacity: 0.55; }
.frame.match { background: #e040fb !important; color: #fff; }
#details { margin: 0 12px 12px; min-height: 16px; font: 12px ui-monospace, monospace; }
input[type=search] { width: 240px; }
</style></head><body>
<header><h1 id="title">TITLE</h1><span id="info"></span>
<input type="search" id="search" placeholder="Search frames (substring)">
<button id="reset">Reset zoom</button><span id="matched"></span></header>
<div id="chart"></div><div id="details"></div>
<script id="profile-data" type="application/json">)HTML";

constexpr char kTail[] = R"HTML(</script>
<script>
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("profile-data").textContent);
  const names = data.names, kinds = data.kinds, root = data.root, total = data.total || 1;
  const chart = document.getElementById("chart"), details = document.getElementById("details");
  const ROW = 18;
  let zoomed = root, term = "";
  (function link(node, parent) {
    node.p = parent;
    for (const c of node.c) link(c, node);
  })(root, null);
  const label = (n) => (n.n < 0 ? "all" : names[n.n]);
  const kind = (n) => (n.n < 0 ? "process" : kinds[n.n]);
  function colour(n) {
    let h = 0;
    const s = label(n);
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
    const k = kind(n), j = h % 40;
    if (k === "python") return "hsl(" + (190 + j) + ",60%,62%)";
    if (k === "kernel") return "hsl(" + (25 + j / 4) + ",80%,55%)";
    if (k === "process") return "hsl(0,0%,75%)";
    return "hsl(" + (j) + ",75%," + (58 + (h % 10)) + "%)";
  }
  const pct = (v) => ((100 * v) / total).toFixed(2) + "%";
  function box(node, x, w, depth, ancestor) {
    const d = document.createElement("div");
    d.className = "frame" + (ancestor ? " ancestor" : "") +
        (term && label(node).toLowerCase().includes(term) ? " match" : "");
    d.style.left = x + "px";
    d.style.width = Math.max(w, 1) + "px";
    d.style.top = depth * ROW + "px";
    d.style.background = colour(node);
    d.dataset.name = label(node);
    d.dataset.samples = node.v;
    d.title = label(node) + " — " + node.v + " samples (" + pct(node.v) + ")";
    if (w > 24) d.textContent = label(node);
    d.addEventListener("click", () => { zoomed = node; render(); });
    d.addEventListener("mouseenter", () => { details.textContent = d.title; });
    chart.appendChild(d);
  }
  let maxDepth = 0;
  function layout(node, x, w, depth) {
    box(node, x, w, depth, false);
    maxDepth = Math.max(maxDepth, depth);
    let cx = x;
    for (const c of node.c) {
      const cw = (w * c.v) / node.v;
      if (cw >= 0.5) layout(c, cx, cw, depth + 1);
      cx += cw;
    }
  }
  function render() {
    chart.innerHTML = "";
    maxDepth = 0;
    const width = chart.clientWidth || 1200;
    const path = [];
    for (let n = zoomed.p; n; n = n.p) path.unshift(n);
    path.forEach((n, i) => box(n, 0, width, i, true));
    layout(zoomed, 0, width, path.length);
    chart.style.height = (maxDepth + 1) * ROW + "px";
    updateMatched();
  }
  function updateMatched() {
    const m = document.getElementById("matched");
    if (!term) { m.textContent = ""; return; }
    let sum = 0;
    (function walk(n) {
      if (n.n >= 0 && label(n).toLowerCase().includes(term)) { sum += n.v; return; }
      for (const c of n.c) walk(c);
    })(root);
    m.textContent = "Matched: " + pct(sum) + " (" + sum + " samples)";
  }
  function find(node, name) {
    if (label(node) === name) return node;
    for (const c of node.c) { const f = find(c, name); if (f) return f; }
    return null;
  }
  const search = document.getElementById("search");
  search.addEventListener("input", () => { term = search.value.toLowerCase(); render(); });
  document.getElementById("reset").addEventListener("click", () => { zoomed = root; render(); });
  window.addEventListener("resize", render);
  document.getElementById("info").textContent = data.info;
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("search")) { search.value = params.get("search"); term = search.value.toLowerCase(); }
  if (params.get("zoom")) zoomed = find(root, params.get("zoom")) || root;
  render();
  document.body.dataset.ready = "1";
})();
</script></body></html>
)HTML";

}  // namespace

std::string EscapeJsonForScript(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string WriteFlameGraphHtml(const Profile& profile, const std::string& title) {
  nlohmann::json tree = CallTreeJson(profile);
  const ProfileInfo& info = profile.info();
  tree["info"] = std::to_string(profile.total_samples()) + " samples, " + info.event + " at " +
                 std::to_string(info.frequency_hz) + " Hz over " +
                 std::to_string(info.duration_ns / 1000000) + " ms";
  std::string head = kHead;
  const std::string escaped_title = HtmlEscape(title);
  for (size_t pos = 0; (pos = head.find("TITLE", pos)) != std::string::npos;) {
    head.replace(pos, 5, escaped_title);
    pos += escaped_title.size();
  }
  // error_handler replace: invalid UTF-8 in a name must not abort the dump.
  return head +
         EscapeJsonForScript(tree.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
         kTail;
}

}  // namespace vigil
