// SPDX-License-Identifier: Apache-2.0
#include "trace/analysis/graph_captures.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

#include <simdjson.h>

#include "base/file_util.h"
#include "trace/model/linker.h"
#include "trace/reader/kineto_reader.h"

namespace vigil::trace {
namespace {

// execution_details.json lists a few files; anything near this size is not one.
constexpr size_t kMaxDetailsBytes = 1 << 20;

struct DetailsEntry {
  std::string file;
  int64_t batch_size = -1;
  std::string mode;
};

StatusOr<std::vector<DetailsEntry>> ReadDetails(const std::string& path) {
  auto text = ReadSmallFile(path, kMaxDetailsBytes);
  if (!text.ok()) return text.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*text).get(root) != simdjson::SUCCESS) {
    return InvalidArgumentError(path + ": not valid JSON");
  }
  simdjson::dom::array list;
  if (root.get_array().get(list) != simdjson::SUCCESS) {
    return InvalidArgumentError(path + ": expected a list of {file, batch_size, mode}");
  }
  std::vector<DetailsEntry> out;
  for (simdjson::dom::element item : list) {
    DetailsEntry d;
    std::string_view file, mode;
    int64_t batch = -1;
    if (item["file"].get_string().get(file) != simdjson::SUCCESS || file.empty() ||
        file.find('/') != std::string_view::npos) {
      return InvalidArgumentError(path + ": an entry without a plain \"file\" name");
    }
    d.file = std::string(file);
    if (item["batch_size"].get_int64().get(batch) == simdjson::SUCCESS) d.batch_size = batch;
    if (item["mode"].get_string().get(mode) == simdjson::SUCCESS) d.mode = std::string(mode);
    out.push_back(std::move(d));
  }
  return out;
}

std::string_view LaunchKernelName(const RankTrace& t, uint32_t row) {
  auto it = std::lower_bound(t.launch_kernels.begin(), t.launch_kernels.end(),
                             std::pair<uint32_t, uint32_t>{row, 0});
  if (it == t.launch_kernels.end() || it->first != row) return {};
  return t.strings.Get(it->second);
}

}  // namespace

void FindCaptureRoots(CaptureFile* file) {
  const RankTrace& t = file->trace;
  const EventTable& e = t.events;
  struct Open {
    uint32_t row;
    int64_t from;
  };
  std::map<std::pair<int64_t, int64_t>, Open> open;  // (pid, tid) -> the begin call
  struct Window {
    uint32_t begin_row;
    int64_t pid, tid, from, to;
  };
  std::vector<Window> windows;
  std::vector<uint32_t> launches;  // every launch call, by row (rows are in file order)
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.kind[i] != EventKind::kRuntime && e.kind[i] != EventKind::kDriver) continue;
    std::string_view n = t.strings.Get(e.name[i]);
    if (n.find("StreamBeginCapture") != std::string_view::npos) {
      open[{e.pid[i], e.tid[i]}] = Open{i, e.end(i)};
    } else if (n.find("StreamEndCapture") != std::string_view::npos) {
      auto it = open.find({e.pid[i], e.tid[i]});
      if (it == open.end()) continue;
      windows.push_back({it->second.row, e.pid[i], e.tid[i], it->second.from, e.ts[i]});
      open.erase(it);
    } else if (IsLaunchName(n) && !IsGraphLaunchName(n)) {
      launches.push_back(i);
    }
  }
  std::sort(windows.begin(), windows.end(),
            [](const Window& a, const Window& b) { return a.from < b.from; });
  std::sort(launches.begin(), launches.end(),
            [&](uint32_t a, uint32_t b) { return e.ts[a] != e.ts[b] ? e.ts[a] < e.ts[b] : a < b; });
  for (const Window& w : windows) {
    CaptureRoot root;
    root.begin_row = w.begin_row;
    auto first = std::lower_bound(launches.begin(), launches.end(), w.from,
                                  [&](uint32_t r, int64_t ts) { return e.ts[r] < ts; });
    for (auto it = first; it != launches.end() && e.ts[*it] <= w.to; ++it) {
      if (e.pid[*it] != w.pid || e.tid[*it] != w.tid) continue;
      root.launches.push_back(*it);
      root.items.push_back(CaptureItem(t.strings.Get(e.name[*it]), LaunchKernelName(t, *it)));
    }
    file->roots.push_back(std::move(root));
  }
}

StatusOr<std::shared_ptr<const GraphCaptures>> LoadGraphCaptures(const std::string& path) {
  std::vector<DetailsEntry> entries;
  std::string dir;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return NotFoundError(path + ": no such file or folder");
  if (S_ISDIR(st.st_mode)) {
    dir = path;
    std::string details = JoinPath(path, "execution_details.json");
    if (PathExists(details)) {
      auto read = ReadDetails(details);
      if (!read.ok()) return read.status();
      entries = std::move(*read);
    } else {
      auto files = ListTraceFiles(path, nullptr);
      if (!files.ok()) return files.status();
      for (const std::string& f : *files) entries.push_back({f.substr(f.rfind('/') + 1), -1, ""});
    }
  } else {
    entries.push_back({path, -1, ""});
  }
  auto captures = std::make_shared<GraphCaptures>();
  ReadOptions options;
  options.threads = 1;
  for (const DetailsEntry& entry : entries) {
    std::string file = dir.empty() ? entry.file : JoinPath(dir, entry.file);
    auto trace = ReadTraceFile(file, options);
    if (!trace.ok()) return trace.status().WithContext("graph capture");
    auto c = std::make_unique<CaptureFile>();
    c->path = file;
    c->batch_size = entry.batch_size;
    c->mode = entry.mode;
    c->trace = std::move(*trace);
    LinkTrace(&c->trace);
    FindCaptureRoots(c.get());
    if (!c->roots.empty()) captures->files.push_back(std::move(c));
  }
  if (captures->files.empty()) {
    return NotFoundError(path +
                         ": no graph capture (StreamBeginCapture .. StreamEndCapture) found");
  }
  return std::shared_ptr<const GraphCaptures>(std::move(captures));
}

}  // namespace vigil::trace
