// SPDX-License-Identifier: Apache-2.0
#include "trace/analyze_inputs.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>

#include <fmt/format.h>

#include "base/file_util.h"
#include "trace/analysis/collective_match.h"
#include "trace/reader/kineto_reader.h"

namespace vigil::trace {
namespace {

bool IsTraceName(const std::string& path) {
  return path.ends_with(".json") || path.ends_with(".json.gz");
}

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// The paths a glob matches, sorted; none is an empty list.
std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

// Adds one directory's trace files; NotFound when it has none.
Status AddDirectory(const std::string& dir, std::vector<std::string>* files) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> listed, ListTraceFiles(dir, nullptr));
  files->insert(files->end(), listed.begin(), listed.end());
  return listed.empty() ? NotFoundError("no *.json or *.json.gz trace files in " + dir)
                        : OkStatus();
}

std::string Describe(const RankTrace& t) {
  return fmt::format("rank {} ({})", t.meta.rank, t.path);
}

}  // namespace

StatusOr<TraceInputs> ExpandTraceInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    if (IsDirectory(input)) {
      VIGIL_RETURN_IF_ERROR(AddDirectory(input, &files));
    } else if (PathExists(input)) {
      files.push_back(input);
    } else if (input.find_first_of("*?[") != std::string::npos) {
      size_t before = files.size();
      for (const std::string& match : Glob(input)) {
        if (IsDirectory(match)) {
          (void)AddDirectory(match, &files);  // A matched folder without traces adds nothing.
        } else if (IsTraceName(match)) {
          files.push_back(match);
        }
      }
      if (files.size() == before) return NotFoundError("no trace file matches " + input);
    } else {
      return NotFoundError("no such trace file or directory: " + input);
    }
  }
  TraceInputs out;
  std::set<std::string> seen;
  for (std::string& f : files) {
    if (!seen.insert(f).second) continue;
    out.bytes += FileSize(f);
    out.files.push_back(std::move(f));
  }
  return out;
}

std::string WhyNotOneJob(const std::vector<RankTrace>& ranks, const KernelClassifier& classifier) {
  if (ranks.size() < 2) return "";
  const RankTrace* gpu = nullptr;  // The first rank that names its GPU.
  const RankTrace* sized = nullptr;
  std::map<int32_t, const RankTrace*> by_rank;
  for (const RankTrace& t : ranks) {
    const std::string device = t.meta.devices.empty() ? "" : t.meta.devices.front().name;
    if (!device.empty() && gpu == nullptr) gpu = &t;
    if (!device.empty() && device != gpu->meta.devices.front().name) {
      return fmt::format("different GPUs: {} ran on {}, {} on {}", Describe(*gpu),
                         gpu->meta.devices.front().name, Describe(t), device);
    }
    if (t.meta.world_size > 0 && sized == nullptr) sized = &t;
    if (t.meta.world_size > 0 && t.meta.world_size != sized->meta.world_size) {
      return fmt::format("different world sizes: {} of {} ranks, {} of {}", Describe(*sized),
                         sized->meta.world_size, Describe(t), t.meta.world_size);
    }
    auto [it, fresh] = by_rank.emplace(t.meta.rank, &t);
    if (!fresh) {
      return fmt::format("rank {} twice: {} and {}", t.meta.rank, it->second->path, t.path);
    }
  }
  std::string family;
  for (const RankTrace& t : ranks) {
    if (t.meta.runtime_family.empty()) continue;
    if (family.empty()) family = t.meta.runtime_family;
    if (t.meta.runtime_family != family) {
      return fmt::format("different GPU runtimes: {} and {} ({})", family, t.meta.runtime_family,
                         Describe(t));
    }
  }
  std::vector<const RankTrace*> ptrs;
  for (const RankTrace& t : ranks) ptrs.push_back(&t);
  const CollectiveMatches matches = MatchCollectives(ptrs, classifier);
  if (matches.collectives.empty()) {
    return fmt::format(
        "no collective in common: the ranks of one job run the same collectives (all-reduce, "
        "all-gather, ...), and no two of these {} traces share one ({} communication kernels "
        "in all)",
        ranks.size(), matches.comm_kernels);
  }
  return "";
}

Status CheckOutputPath(const std::string& path) {
  if (path == "-") return OkStatus();
  if (IsDirectory(path)) return InvalidArgumentError(path + " is a directory, not a file");
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (!IsDirectory(dir)) {
    return InvalidArgumentError(
        fmt::format("cannot write {}: {} {}", path, dir,
                    PathExists(dir) ? "is not a directory" : "does not exist"));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgumentError(
        fmt::format("cannot write {}: no permission to write in {}", path, dir));
  }
  return OkStatus();
}

}  // namespace vigil::trace
