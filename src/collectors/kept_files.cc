// SPDX-License-Identifier: Apache-2.0
#include "collectors/kept_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace vigil {
namespace {

std::atomic<int> g_kept_files{0};

constexpr long kProcMagic = 0x9fa0;
constexpr long kSysfsMagic = 0x62656572;
constexpr long kCgroupMagic = 0x27e0eb;
constexpr long kCgroup2Magic = 0x63677270;

long FilesystemType(int fd) {
  struct statfs fs {};
  return fstatfs(fd, &fs) == 0 ? static_cast<long>(fs.f_type) : 0;
}

// Reads the whole file at `fd` from offset 0 into *out; false with errno set on a read error.
bool PreadWhole(int fd, size_t first_chunk, size_t max_bytes, std::string* out) {
  out->clear();
  size_t chunk = first_chunk;
  off_t offset = 0;
  while (true) {
    const size_t old = out->size();
    if (old > max_bytes) {
      return true;  // The caller reports the size.
    }
    out->resize(old + chunk);
    const ssize_t n = pread(fd, out->data() + old, chunk, offset);
    if (n < 0) {
      out->resize(old);
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    out->resize(old + static_cast<size_t>(n));
    if (n == 0) {
      return true;
    }
    offset += n;
    if (chunk < (1 << 20)) {
      chunk *= 2;
    }
  }
}

Status TooLarge(const std::string& path, size_t max_bytes) {
  return DataLossError("read " + path + ": file larger than " + std::to_string(max_bytes) +
                       " bytes");
}

}  // namespace

Status PreadFileInto(int fd, const std::string& path, std::string* out, size_t max_bytes) {
  if (!PreadWhole(fd, 4096, max_bytes, out)) {
    const int err = errno;
    out->clear();
    return ErrnoStatus(err, "read " + path);
  }
  if (out->size() > max_bytes) {
    return TooLarge(path, max_bytes);
  }
  return OkStatus();
}

bool OnProcfs(int fd) { return FilesystemType(fd) == kProcMagic; }

bool OnPseudoFilesystem(int fd) {
  const long type = FilesystemType(fd);
  return type == kProcMagic || type == kSysfsMagic || type == kCgroupMagic || type == kCgroup2Magic;
}

bool TakeKeptFileSlot() {
  if (g_kept_files.fetch_add(1) >= kMaxKeptFiles) {
    g_kept_files.fetch_sub(1);
    return false;
  }
  return true;
}

void ReturnKeptFileSlots(int count) { g_kept_files.fetch_sub(count); }

void KeptFiles::CloseAll() {
  for (auto& [path, kept] : kept_) {
    close(kept.fd);
  }
  ReturnKeptFileSlots(static_cast<int>(kept_.size()));
  kept_.clear();
}

Status KeptFiles::ReadInto(const std::string& path, std::string* out, size_t max_bytes) {
  auto it = kept_.find(path);
  if (it != kept_.end() && it->second.regular) {
    struct stat st {};
    if (fstat(it->second.fd, &st) != 0 || st.st_nlink == 0) {
      Forget(it);  // Replaced or removed: the name says what is there now.
      it = kept_.end();
    }
  }
  if (it != kept_.end()) {
    Kept& kept = it->second;
    // One pread for the whole file in the usual case: seq_file fills as much as it is asked for.
    const size_t first = std::max<size_t>(4096, kept.last_size + kept.last_size / 4 + 256);
    if (PreadWhole(kept.fd, first, max_bytes, out)) {
      return Finish(path, out, max_bytes, &kept);
    }
    // A removed sysfs or cgroup file answers ENODEV: open the name again, as a first read does.
    Forget(it);
  }
  if (!TakeKeptFileSlot()) {
    return ReadFileInto(path, out, max_bytes);
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    ReturnKeptFileSlots(1);
    out->clear();
    return ErrnoStatus(err, "open " + path);
  }
  it = kept_.emplace(path, Kept{fd, !OnPseudoFilesystem(fd), 0}).first;
  if (!PreadWhole(fd, 4096, max_bytes, out)) {
    const int err = errno;
    Forget(it);
    out->clear();
    return ErrnoStatus(err, "read " + path);
  }
  return Finish(path, out, max_bytes, &it->second);
}

void KeptFiles::Forget(std::unordered_map<std::string, Kept>::iterator it) {
  close(it->second.fd);
  kept_.erase(it);
  ReturnKeptFileSlots(1);
}

Status KeptFiles::Finish(const std::string& path, std::string* out, size_t max_bytes, Kept* kept) {
  if (out->size() > max_bytes) {
    return TooLarge(path, max_bytes);
  }
  kept->last_size = out->size();
  return OkStatus();
}

}  // namespace vigil
