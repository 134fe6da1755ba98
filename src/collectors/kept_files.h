// SPDX-License-Identifier: Apache-2.0
// Files a collector reads every tick, read through descriptors kept open between ticks. A pread
// at offset 0 makes procfs and sysfs produce the file again, so only the first tick pays the path
// walk, open and close, which cost as much as the read itself for most /proc files (on the test
// VM: /proc/net/netstat 89 µs opened each time, 38 µs kept; /proc/loadavg 4.3 against 1.2). One
// process-wide budget (kMaxKeptFiles) bounds the descriptors all collectors keep; past it a read
// opens and closes as ReadFileInto() does. Not thread-safe: each collector owns its own.
#pragma once

#include <string>
#include <unordered_map>

#include "base/file_util.h"
#include "base/status.h"

namespace vigil {

// Descriptors kept open by all collectors together (the systemd unit allows 4096).
inline constexpr int kMaxKeptFiles = 512;

// The whole file open at `fd`, from offset 0, into *out (ReadFileInto()'s errors, naming `path`).
Status PreadFileInto(int fd, const std::string& path, std::string* out,
                     size_t max_bytes = kDefaultMaxFileBytes);

// Whether the file open at `fd` is on procfs; on procfs, sysfs or cgroupfs, which produce a
// file's text on each read and never unlink it under an open descriptor (linux/magic.h).
bool OnProcfs(int fd);
bool OnPseudoFilesystem(int fd);

// Takes one descriptor from the process-wide budget; false when it is spent.
bool TakeKeptFileSlot();
void ReturnKeptFileSlots(int count);

class KeptFiles {
 public:
  KeptFiles() = default;
  ~KeptFiles() { CloseAll(); }
  KeptFiles(const KeptFiles&) = delete;
  KeptFiles& operator=(const KeptFiles&) = delete;

  // ReadFileInto() through a kept descriptor: the whole file into *out, the same errors. A file
  // that was replaced or removed since (fixture trees, regular files) is opened again by name.
  Status ReadInto(const std::string& path, std::string* out,
                  size_t max_bytes = kDefaultMaxFileBytes);
  // Closes every kept descriptor (before a collector lists its sources again).
  void CloseAll();

 private:
  struct Kept {
    int fd = -1;
    bool regular = false;  // A regular file: checked for having been unlinked before each read.
    size_t last_size = 0;  // The first pread asks for a little more than this.
  };
  using Map = std::unordered_map<std::string, Kept>;
  void Forget(Map::iterator it);
  static Status Finish(const std::string& path, std::string* out, size_t max_bytes, Kept* kept);
  Map kept_;
};

}  // namespace vigil
