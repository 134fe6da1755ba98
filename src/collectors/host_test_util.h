// SPDX-License-Identifier: Apache-2.0
// Test-only helpers for the host collectors' tests: fixture tree paths (tests/data/hosts/<kind>),
// a scratch directory tree removed on destruction, and sample look-ups in a MetricBatch.
// Header-only; included by *_test.cc files only. Single-threaded use.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "collectors/collector.h"
#include "metrics/metric.h"

namespace vigil::testing {

inline HostPaths FixturePaths(std::string_view kind) {
  const std::string root = std::string(VIGIL_TEST_DATA_DIR) + "/hosts/" + std::string(kind);
  return HostPaths{.proc_root = root + "/proc", .sys_root = root + "/sys"};
}

// A fresh directory under $TMPDIR (or /tmp) holding proc/ and sys/; removed with its contents.
class ScratchTree {
 public:
  ScratchTree() {
    std::string pattern = (std::filesystem::temp_directory_path() / "vigil-host-XXXXXX").string();
    root_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
    std::filesystem::create_directories(root_ + "/proc");
    std::filesystem::create_directories(root_ + "/sys");
  }
  ~ScratchTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  ScratchTree(const ScratchTree&) = delete;
  ScratchTree& operator=(const ScratchTree&) = delete;

  // Writes `text` to root/rel, creating directories.
  void Write(std::string_view rel, std::string_view text) const {
    const std::filesystem::path path = std::filesystem::path(root_) / rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
  void MakeDir(std::string_view rel) const {
    std::filesystem::create_directories(std::filesystem::path(root_) / rel);
  }
  const std::string& root() const { return root_; }
  HostPaths paths() const {
    return HostPaths{.proc_root = root_ + "/proc", .sys_root = root_ + "/sys"};
  }

 private:
  std::string root_;
};

// Runs one Collect() into a fresh batch.
struct CollectResult {
  Status status;
  MetricBatch batch;
};
inline CollectResult CollectOnce(Collector& collector) {
  CollectResult r;
  MetricWriter writer(&r.batch);
  r.status = collector.Collect(writer);
  return r;
}

// The value of the one sample of family `name` whose labels include every pair of `labels`.
inline std::optional<double> FindValue(const MetricBatch& batch, std::string_view name,
                                       const Labels& labels = {}) {
  std::optional<double> found;
  for (const Sample& s : batch.samples) {
    if (s.desc->name != name) {
      continue;
    }
    bool match = true;
    for (const auto& [key, value] : labels) {
      match = match && LabelValue(s.labels, key) == value;
    }
    if (match) {
      if (found) {
        return std::nullopt;  // Ambiguous: the caller must name more labels.
      }
      found = s.value;
    }
  }
  return found;
}

// Like FindValue, but a missing or ambiguous sample is a test failure (and NaN).
inline double MustFind(const MetricBatch& batch, std::string_view name, const Labels& labels = {}) {
  std::optional<double> v = FindValue(batch, name, labels);
  if (!v) {
    ADD_FAILURE() << "no single sample of " << name;
    return std::numeric_limits<double>::quiet_NaN();
  }
  return *v;
}

// Number of samples of family `name`.
inline size_t CountSamples(const MetricBatch& batch, std::string_view name) {
  size_t n = 0;
  for (const Sample& s : batch.samples) {
    n += s.desc->name == name ? 1 : 0;
  }
  return n;
}

}  // namespace vigil::testing
