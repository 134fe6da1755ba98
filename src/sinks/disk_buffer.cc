// SPDX-License-Identifier: Apache-2.0
#include "sinks/disk_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include "base/file_util.h"
#include "base/logging.h"
#include "base/strings.h"

namespace vigil {
namespace {

constexpr std::string_view kMagic = "VRB1";
constexpr size_t kHeaderBytes = 4 + 8 + 8;  // magic, payload length, FNV-1a 64 of the payload.
constexpr std::string_view kSuffix = ".rwb";
constexpr size_t kSeqDigits = 20;

uint64_t Fnv1a64(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : data) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

void PutU64(uint64_t v, std::string* out) {
  for (int i = 0; i < 8; ++i) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

uint64_t GetU64(std::string_view bytes) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return v;
}

uint32_t GetU32(std::string_view bytes) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4 && i < bytes.size(); ++i) {
    v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  }
  return v;
}

// The item count at the start of a counted entry's payload, read from its file header.
uint32_t ReadItems(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return 0;
  }
  char head[kHeaderBytes + 4];
  const ssize_t n = pread(fd, head, sizeof(head), 0);
  close(fd);
  return n == static_cast<ssize_t>(sizeof(head)) ? GetU32(std::string_view(head + kHeaderBytes, 4))
                                                 : 0;
}

// Payload of a file's contents, or DataLoss.
StatusOr<std::string> Unframe(std::string contents, const std::string& path) {
  if (contents.size() < kHeaderBytes || std::string_view(contents).substr(0, 4) != kMagic) {
    return DataLossError("disk buffer: bad header in " + path);
  }
  const uint64_t len = GetU64(std::string_view(contents).substr(4, 8));
  const uint64_t sum = GetU64(std::string_view(contents).substr(12, 8));
  if (len != contents.size() - kHeaderBytes) {
    return DataLossError("disk buffer: truncated entry " + path);
  }
  contents.erase(0, kHeaderBytes);
  if (Fnv1a64(contents) != sum) {
    return DataLossError("disk buffer: checksum mismatch in " + path);
  }
  return contents;
}

}  // namespace

StatusOr<std::unique_ptr<DiskBuffer>> DiskBuffer::Open(DiskBufferOptions options) {
  std::unique_ptr<DiskBuffer> buffer(new DiskBuffer(std::move(options)));
  if (buffer->persistent()) {
    VIGIL_RETURN_IF_ERROR(MakeDirs(buffer->options_.dir, 0700));
    VIGIL_RETURN_IF_ERROR(buffer->Index());
  }
  return buffer;
}

std::string DiskBuffer::PathOf(uint64_t seq) const {
  std::string name = std::to_string(seq);
  name.insert(0, kSeqDigits - std::min(kSeqDigits, name.size()), '0');
  name.append(kSuffix);
  return JoinPath(options_.dir, name);
}

Status DiskBuffer::Index() {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(options_.dir));
  for (const std::string& name : names) {
    const std::string path = JoinPath(options_.dir, name);
    if (name.ends_with(".tmp")) {
      unlink(path.c_str());  // A write interrupted by a crash: never renamed, never acknowledged.
      continue;
    }
    if (!name.ends_with(kSuffix) || name.size() != kSeqDigits + kSuffix.size()) {
      continue;
    }
    const std::optional<uint64_t> seq = ParseUint64(name.substr(0, kSeqDigits));
    struct stat st {};
    if (!seq || stat(path.c_str(), &st) != 0) {
      continue;
    }
    const size_t size = static_cast<size_t>(st.st_size);
    Entry entry{*seq, size > kHeaderBytes ? size - kHeaderBytes : 0, 0, false, {}};
    if (options_.counted) {
      entry.items = ReadItems(path);
    }
    entries_.push_back(std::move(entry));
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
  for (const Entry& e : entries_) {
    bytes_ += e.bytes;
  }
  if (!entries_.empty()) {
    next_seq_ = entries_.back().seq + 1;
    VIGIL_LOG_INFO("disk buffer: replaying entries left by an earlier run: dir={} entries={}",
                   options_.dir, entries_.size());
  }
  while (bytes_ > options_.max_bytes && !entries_.empty()) {
    DropFront();
  }
  return OkStatus();
}

uint32_t DiskBuffer::ItemsOf(std::string_view payload) const {
  return options_.counted ? GetU32(payload.substr(0, 4)) : 0;
}

void DiskBuffer::Forget(const Entry& e) {
  bytes_ -= e.bytes;
  if (e.in_memory && persistent()) {
    memory_bytes_ -= e.bytes;
  }
  entries_.pop_front();
}

void DiskBuffer::DropFront() {
  const Entry& e = entries_.front();
  if (!e.in_memory) {
    unlink(PathOf(e.seq).c_str());
  }
  ++dropped_;
  dropped_items_ += e.items;
  Forget(e);
}

Status DiskBuffer::Append(std::string_view payload) {
  if (payload.size() > options_.max_bytes) {
    ++dropped_;
    dropped_items_ += ItemsOf(payload);
    return ResourceExhaustedError("disk buffer: payload of " + std::to_string(payload.size()) +
                                  " bytes exceeds the buffer bound");
  }
  while (!entries_.empty() && bytes_ + payload.size() > options_.max_bytes) {
    DropFront();
  }
  Entry entry{next_seq_, payload.size(), ItemsOf(payload), true, {}};
  if (persistent()) {
    std::string framed;
    framed.reserve(kHeaderBytes + payload.size());
    framed.append(kMagic);
    PutU64(payload.size(), &framed);
    PutU64(Fnv1a64(payload), &framed);
    framed.append(payload);
    Status written = WriteFileAtomic(PathOf(entry.seq), framed, 0600);
    if (written.ok()) {
      entry.in_memory = false;
      write_error_.clear();
    } else {
      // Disk full or the directory went away: keep the payload, in order, in memory.
      if (write_error_.empty()) {
        VIGIL_LOG_WARN("disk buffer: cannot write to {}, holding payloads in memory: err={}",
                       options_.dir, written.message());
      }
      write_error_ = written.message();
      memory_bytes_ += payload.size();
    }
  }
  if (entry.in_memory) {
    entry.memory.assign(payload);
  }
  ++next_seq_;
  bytes_ += entry.bytes;
  entries_.push_back(std::move(entry));
  return OkStatus();
}

StatusOr<std::string> DiskBuffer::Front() {
  while (!entries_.empty()) {
    Entry& e = entries_.front();
    if (e.in_memory) {
      return e.memory;
    }
    const std::string path = PathOf(e.seq);
    StatusOr<std::string> contents = ReadSmallFile(path, options_.max_bytes + kHeaderBytes + 1);
    if (!contents.ok() && !IsAbsent(contents.status()) &&
        contents.status().code() != StatusCode::kDataLoss) {
      return contents.status();  // An I/O error: keep the entry and let the caller retry.
    }
    StatusOr<std::string> payload =
        contents.ok() ? Unframe(std::move(contents).value(), path) : contents.status();
    if (payload.ok()) {
      return payload;
    }
    VIGIL_LOG_WARN("disk buffer: dropping unreadable entry: err={}", payload.status().message());
    unlink(path.c_str());
    ++corrupt_;
    dropped_items_ += e.items;
    Forget(e);
  }
  return NotFoundError("disk buffer: empty");
}

Status DiskBuffer::PopFront() {
  if (entries_.empty()) {
    return NotFoundError("disk buffer: empty");
  }
  const Entry& e = entries_.front();
  if (!e.in_memory && unlink(PathOf(e.seq).c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "unlink " + PathOf(e.seq));
  }
  Forget(e);
  return OkStatus();
}

}  // namespace vigil
