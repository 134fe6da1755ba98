// SPDX-License-Identifier: Apache-2.0
// Sequential bytes of a trace file: plain JSON, or gzip decompressed in chunks with zlib so a
// multi-GB .json.gz never sits in memory whole. A damaged or cut-off gzip stream ends the data
// early and says so (truncated()), so the caller can analyse what was read. One thread at a time.
// Owner: trace.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace vigil::trace {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills up to `cap` bytes; returns 0 at the end of the data.
  virtual StatusOr<size_t> Read(char* dst, size_t cap) = 0;
  // True when the data ended before the format said it should (cut-off or corrupt gzip).
  bool truncated() const { return truncated_; }
  const std::string& truncation_detail() const { return detail_; }
  // Bytes of the file itself consumed so far (compressed bytes for gzip).
  uint64_t file_bytes_read() const { return file_bytes_; }
  uint64_t file_size() const { return file_size_; }
  bool is_gzip() const { return gzip_; }
  // The size of the data when known up front (a plain file's size, a gzip file's trailer), else
  // 0. A hint for sizing tables: it may be wrong for concatenated or >4 GiB gzip data.
  uint64_t uncompressed_size_hint() const { return size_hint_; }

 protected:
  bool truncated_ = false;
  std::string detail_;
  uint64_t file_bytes_ = 0;
  uint64_t file_size_ = 0;
  uint64_t size_hint_ = 0;
  bool gzip_ = false;
  friend class BackgroundSource;
};

// Opens `path`; gzip is recognised by its magic bytes, not the file name. When `progress` is
// set, it is advanced by the file bytes consumed. With `background`, gzip is inflated on a
// second thread (under 1 MB ahead of the reader) so decompression and parsing overlap.
StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path,
                                                     std::atomic<uint64_t>* progress = nullptr,
                                                     bool background = false);

}  // namespace vigil::trace
