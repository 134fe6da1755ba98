// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/capture_alignment.h"

#include <deque>
#include <map>

namespace vigil::trace {
namespace {

using Kind = AlignItem::Kind;

bool Matches(const AlignItem& capture, const AlignItem& replay) {
  if (capture.kind == Kind::kUnnamed) return true;
  if (capture.kind != replay.kind) return false;
  return capture.kind != Kind::kKernel || capture.name == replay.name;
}

std::optional<Alignment> Positional(const std::vector<AlignItem>& c,
                                    const std::vector<AlignItem>& r) {
  if (c.size() != r.size()) return std::nullopt;
  Alignment a{AlignMethod::kPositional, {}};
  a.capture_of.resize(r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (!Matches(c[i], r[i])) return std::nullopt;
    a.capture_of[i] = static_cast<uint32_t>(i);
  }
  return a;
}

std::optional<Alignment> Greedy(const std::vector<AlignItem>& c, const std::vector<AlignItem>& r) {
  if (c.size() < r.size()) return std::nullopt;
  Alignment a{AlignMethod::kGreedy, {}};
  a.capture_of.reserve(r.size());
  size_t ci = 0;
  for (const AlignItem& item : r) {
    while (ci < c.size() && !Matches(c[ci], item)) ++ci;
    if (ci == c.size()) return std::nullopt;
    a.capture_of.push_back(static_cast<uint32_t>(ci++));
  }
  return a;
}

// The group key of an item: its kind and, for kernels, its name.
std::pair<Kind, std::string_view> Key(const AlignItem& i) {
  return {i.kind, i.kind == Kind::kKernel ? i.name : std::string_view()};
}

std::optional<Alignment> ByName(const std::vector<AlignItem>& c, const std::vector<AlignItem>& r) {
  if (c.size() != r.size()) return std::nullopt;
  std::map<std::pair<Kind, std::string_view>, std::vector<uint32_t>> groups;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i].kind == Kind::kUnnamed) return std::nullopt;  // nothing to group by
    groups[Key(c[i])].push_back(static_cast<uint32_t>(i));
  }
  std::map<std::pair<Kind, std::string_view>, size_t> taken;
  Alignment a{AlignMethod::kByName, {}};
  a.capture_of.reserve(r.size());
  for (const AlignItem& item : r) {
    auto it = groups.find(Key(item));
    size_t& n = taken[Key(item)];
    if (it == groups.end() || n >= it->second.size()) return std::nullopt;
    a.capture_of.push_back(it->second[n++]);
  }
  return a;
}

std::optional<Alignment> ByStream(const std::vector<AlignItem>& c,
                                  const std::vector<AlignItem>& r) {
  std::map<int64_t, std::deque<uint32_t>> queues;
  for (size_t i = 0; i < r.size(); ++i) queues[r[i].stream].push_back(static_cast<uint32_t>(i));
  if (queues.size() < 2) return std::nullopt;
  Alignment a{AlignMethod::kByStream, {}};
  a.capture_of.assign(r.size(), UINT32_MAX);
  size_t matched = 0;
  for (size_t ci = 0; ci < c.size(); ++ci) {
    std::deque<uint32_t>* best = nullptr;
    size_t best_run = 0;
    for (auto& [stream, q] : queues) {
      if (q.empty() || !Matches(c[ci], r[q.front()])) continue;
      size_t run = 0;  // how far the capture goes on matching this stream's queue
      while (run < q.size() && ci + run < c.size() && Matches(c[ci + run], r[q[run]])) ++run;
      if (best == nullptr || run > best_run) {
        best = &q;
        best_run = run;
      }
    }
    if (best == nullptr) continue;
    a.capture_of[best->front()] = static_cast<uint32_t>(ci);
    best->pop_front();
    ++matched;
  }
  if (matched != r.size()) return std::nullopt;
  return a;
}

}  // namespace

AlignItem CaptureItem(std::string_view call, std::string_view kernel_name) {
  if (call.find("Memcpy") != std::string_view::npos) return {Kind::kMemcpy, {}, -1};
  if (call.find("Memset") != std::string_view::npos) return {Kind::kMemset, {}, -1};
  if (kernel_name.empty()) return {Kind::kUnnamed, {}, -1};
  return {Kind::kKernel, kernel_name, -1};
}

AlignItem ReplayItem(std::string_view gpu_name, int64_t stream) {
  if (gpu_name.find("Memcpy") != std::string_view::npos) return {Kind::kMemcpy, {}, stream};
  if (gpu_name.find("Memset") != std::string_view::npos) return {Kind::kMemset, {}, stream};
  return {Kind::kKernel, gpu_name, stream};
}

std::string_view AlignMethodName(AlignMethod m) {
  switch (m) {
    case AlignMethod::kNone:
      return "none";
    case AlignMethod::kPositional:
      return "positional";
    case AlignMethod::kGreedy:
      return "greedy";
    case AlignMethod::kByName:
      return "by_name";
    case AlignMethod::kByStream:
      return "by_stream";
  }
  return "none";
}

Alignment AlignCaptureToReplay(const std::vector<AlignItem>& capture,
                               const std::vector<AlignItem>& replay) {
  if (replay.empty()) return {};
  std::map<int64_t, int> streams;
  for (const AlignItem& r : replay) streams[r.stream] = 1;
  if (streams.size() > 1) {
    if (auto a = ByStream(capture, replay)) return *a;
    return {};
  }
  for (auto* strategy : {&Positional, &Greedy, &ByName}) {
    if (auto a = strategy(capture, replay)) return *a;
  }
  return {};
}

}  // namespace vigil::trace
