// SPDX-License-Identifier: Apache-2.0
// A CPU profile in memory: interned frames (native, kernel, Python, process) and the count of
// samples per distinct stack, root first. Every output (folded, pprof, flame graph, JSON, text
// summary) is written from this one model, so they always agree. Filled by one sampler thread,
// read after sampling; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vigil {

enum class FrameKind { kNative, kKernel, kPython, kProcess };

struct ProfileFrame {
  FrameKind kind = FrameKind::kNative;
  std::string function;  // Demangled; "[unknown]" when no symbol covers the address.
  std::string module;    // "libc.so.6", "[kernel]"; the interpreter's module for Python frames.
  std::string file;      // Python: the code object's file name.
  int line = 0;          // Python: the line running now.

  bool operator<(const ProfileFrame& o) const;
  bool operator==(const ProfileFrame& o) const;
};

// The name outputs show: "f" (native), "f_[k]" (kernel, as FlameGraph annotates it; an
// unnamed kernel address stays "[kernel]"),
// "f (file.py:42)" with the file's basename (Python), the process name (process).
std::string FrameLabel(const ProfileFrame& frame);

struct ProfileInfo {
  std::string event = "cpu-clock";  // The sampled event.
  int frequency_hz = 99;
  int64_t start_unix_ns = 0;
  int64_t duration_ns = 0;
  uint64_t lost_samples = 0;
  uint64_t python_samples = 0;  // Samples with Python frames merged in.
  uint64_t gil_samples = 0;     // ... whose thread held the GIL.
  std::vector<int> pids;
};

class Profile {
 public:
  // The id of `frame`, adding it on first use.
  int Intern(const ProfileFrame& frame);
  // Adds `count` samples of the stack `frame_ids` (root first).
  void Add(const std::vector<int>& frame_ids, uint64_t count = 1);

  const std::vector<ProfileFrame>& frames() const { return frames_; }
  const std::map<std::vector<int>, uint64_t>& stacks() const { return stacks_; }
  uint64_t total_samples() const { return total_; }
  ProfileInfo& info() { return info_; }
  const ProfileInfo& info() const { return info_; }

 private:
  std::vector<ProfileFrame> frames_;
  std::map<ProfileFrame, int> ids_;
  std::map<std::vector<int>, uint64_t> stacks_;
  uint64_t total_ = 0;
  ProfileInfo info_;
};

// Adds every stack of `from` to `into` under a root frame named `root` (kind process): how the
// profiles of several hosts are merged into one, each host's stacks under its name.
void MergeProfileUnder(const std::string& root, const Profile& from, Profile* into);

}  // namespace vigil
