// SPDX-License-Identifier: Apache-2.0
// A bounded FIFO of opaque payloads (remote-write request bodies) kept in a directory, so an
// outage of the receiver, or a restart of the daemon during one, loses nothing: payloads are
// appended while the receiver is down and replayed oldest first when it returns. One file per
// payload, named by a 20-digit sequence number; each file carries a magic, the length and a
// checksum, and is written to a temporary name then renamed, so a crash never leaves a torn entry.
// Bounded by total bytes: past the bound the oldest payloads are deleted and counted. With an
// empty directory the buffer lives in memory only (same bound, lost on restart). When a write to
// the directory fails (disk full, read-only or unwritable state dir) the payload is kept in memory
// instead, in order, and counted in memory_bytes(): those bytes are lost if the daemon restarts,
// which `vigil status` shows as a degraded sink.
// Thread-compatible: owned by one thread (the sink's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace vigil {

struct DiskBufferOptions {
  std::string dir;                  // "" = in memory only.
  size_t max_bytes = 256ull << 20;  // Payload bytes kept, all entries together.
  // Payloads start with their item count (uint32, little-endian), so the buffer can count the
  // items (samples) of the entries it drops.
  bool counted = false;
};

class DiskBuffer {
 public:
  // Creates the directory if needed and indexes the entries an earlier run left there.
  static StatusOr<std::unique_ptr<DiskBuffer>> Open(DiskBufferOptions options);

  // Appends one payload after the newest, first dropping the oldest entries while the bound would
  // be exceeded. A payload larger than the whole bound is dropped itself (ResourceExhausted). A
  // payload the directory cannot take is kept in memory (OK; see write_error()).
  Status Append(std::string_view payload);
  // The oldest payload. NotFound when empty. An entry that fails its checksum is deleted, counted
  // in corrupt(), and the next one is returned.
  StatusOr<std::string> Front();
  // Deletes the oldest entry.
  Status PopFront();

  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }
  size_t bytes() const { return bytes_; }
  uint64_t dropped() const { return dropped_; }  // Entries dropped to stay within the bound.
  uint64_t dropped_items() const { return dropped_items_; }  // Their items (counted payloads).
  uint64_t corrupt() const { return corrupt_; }
  bool persistent() const { return !options_.dir.empty(); }
  // Bytes of entries held in memory although the buffer has a directory (lost on a restart).
  size_t memory_bytes() const { return memory_bytes_; }
  // The last failed write to the directory; "" once a write succeeds again.
  const std::string& write_error() const { return write_error_; }

 private:
  struct Entry {
    uint64_t seq = 0;
    size_t bytes = 0;        // Payload bytes.
    uint32_t items = 0;      // The payload's item count (counted payloads).
    bool in_memory = false;  // Held in `memory`, not in a file.
    std::string memory;
  };

  explicit DiskBuffer(DiskBufferOptions options) : options_(std::move(options)) {}
  Status Index();
  std::string PathOf(uint64_t seq) const;
  void DropFront();
  uint32_t ItemsOf(std::string_view payload) const;
  void Forget(const Entry& e);

  DiskBufferOptions options_;
  std::deque<Entry> entries_;
  uint64_t next_seq_ = 1;
  size_t bytes_ = 0;
  size_t memory_bytes_ = 0;  // In-memory entries of a persistent buffer.
  uint64_t dropped_ = 0;
  uint64_t dropped_items_ = 0;
  uint64_t corrupt_ = 0;
  std::string write_error_;
};

}  // namespace vigil
