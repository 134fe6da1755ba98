// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <zlib.h>

#include "base/file_util.h"

namespace vigil::trace {
namespace {

// Compressed input is read in small chunks: zlib needs no more to run at full speed, and every
// byte here is resident for the whole read.
constexpr size_t kInChunk = 128 << 10;

// The uncompressed size a gzip file announces in its trailer (ISIZE: the size modulo 2^32 of its
// last member), or 0 when the file is too short to have one. Read with pread: the file offset of
// `fd` does not move.
uint64_t GzipTrailerSize(int fd, uint64_t file_size) {
  if (file_size < 18) return 0;
  unsigned char b[4];
  if (::pread(fd, b, 4, static_cast<off_t>(file_size - 4)) != 4) return 0;
  return uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16 | uint64_t{b[3]} << 24;
}

class FileReader {
 public:
  FileReader(ScopedFd fd, std::atomic<uint64_t>* progress)
      : fd_(std::move(fd)), progress_(progress) {}
  int fd() const { return fd_.get(); }
  // Returns bytes read, 0 at EOF.
  StatusOr<size_t> ReadRaw(char* dst, size_t cap, uint64_t* counter) {
    while (true) {
      ssize_t n = ::read(fd_.get(), dst, cap);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, "read trace");
      *counter += static_cast<uint64_t>(n);
      if (progress_ != nullptr) progress_->fetch_add(static_cast<uint64_t>(n));
      return static_cast<size_t>(n);
    }
  }

 private:
  ScopedFd fd_;
  std::atomic<uint64_t>* progress_;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(FileReader reader, std::string prefix, uint64_t size)
      : reader_(std::move(reader)), prefix_(std::move(prefix)) {
    file_size_ = size;
    size_hint_ = size;
    file_bytes_ = prefix_.size();
  }
  StatusOr<size_t> Read(char* dst, size_t cap) override {
    if (!prefix_.empty()) {
      size_t n = std::min(cap, prefix_.size());
      std::copy(prefix_.begin(), prefix_.begin() + static_cast<ptrdiff_t>(n), dst);
      prefix_.erase(0, n);
      return n;
    }
    return reader_.ReadRaw(dst, cap, &file_bytes_);
  }

 private:
  FileReader reader_;
  std::string prefix_;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(FileReader reader, std::string prefix, uint64_t size)
      : reader_(std::move(reader)), in_(kInChunk) {
    file_size_ = size;
    file_bytes_ = prefix.size();
    gzip_ = true;
    // ISIZE wraps past 4 GiB; JSON compresses 5-30x, so a hint below the file size is wrong.
    const uint64_t isize = GzipTrailerSize(reader_.fd(), size);
    size_hint_ = isize > size ? isize : 0;
    std::copy(prefix.begin(), prefix.end(), in_.begin());
    strm_.next_in = reinterpret_cast<Bytef*>(in_.data());
    strm_.avail_in = static_cast<uInt>(prefix.size());
    ok_ = inflateInit2(&strm_, 15 + 32) == Z_OK;
  }
  ~GzipSource() override { inflateEnd(&strm_); }

  StatusOr<size_t> Read(char* dst, size_t cap) override {
    if (!ok_) return InternalError("inflateInit2 failed");
    if (done_) return size_t{0};
    strm_.next_out = reinterpret_cast<Bytef*>(dst);
    strm_.avail_out = static_cast<uInt>(cap);
    while (strm_.avail_out > 0) {
      if (strm_.avail_in == 0) {
        VIGIL_ASSIGN_OR_RETURN(size_t n, reader_.ReadRaw(in_.data(), in_.size(), &file_bytes_));
        if (n == 0) {
          if (!stream_ended_) {
            truncated_ = true;
            detail_ = "gzip stream ends early (file cut off)";
          }
          done_ = true;
          break;
        }
        strm_.next_in = reinterpret_cast<Bytef*>(in_.data());
        strm_.avail_in = static_cast<uInt>(n);
      }
      if (stream_ended_) {
        // Another gzip member follows (concatenated .gz files); skip stray zero padding.
        if (*strm_.next_in == 0) {
          --strm_.avail_in;
          ++strm_.next_in;
          continue;
        }
        inflateReset(&strm_);
        stream_ended_ = false;
      }
      int rc = inflate(&strm_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_ended_ = true;
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input
      if (rc != Z_OK) {
        truncated_ = true;
        detail_ = std::string("gzip data corrupt: ") + (strm_.msg ? strm_.msg : "inflate error");
        done_ = true;
        break;
      }
    }
    return cap - strm_.avail_out;
  }

 private:
  FileReader reader_;
  std::vector<char> in_;
  z_stream strm_{};
  bool ok_ = false;
  bool done_ = false;
  bool stream_ended_ = false;
};

}  // namespace

// Runs another source on a producer thread, a bounded number of chunks ahead. The chunks are
// allocated once and recycled, so the memory in flight is fixed (kSlots * kChunk).
class BackgroundSource : public ByteSource {
 public:
  explicit BackgroundSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {
    file_size_ = inner_->file_size();
    size_hint_ = inner_->uncompressed_size_hint();
    gzip_ = inner_->is_gzip();
    for (size_t i = 0; i < kSlots; ++i) free_.emplace_back(kChunk);
    thread_ = std::thread([this] { Produce(); });
  }
  ~BackgroundSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  StatusOr<size_t> Read(char* dst, size_t cap) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !ready_.empty() || done_; });
    if (ready_.empty()) {
      truncated_ = inner_->truncated();
      detail_ = inner_->truncation_detail();
      file_bytes_ = inner_->file_bytes_read();
      if (!status_.ok()) return status_;
      return size_t{0};
    }
    Chunk& chunk = ready_.front();
    size_t n = std::min(cap, chunk.size - offset_);
    std::copy(chunk.data.begin() + static_cast<ptrdiff_t>(offset_),
              chunk.data.begin() + static_cast<ptrdiff_t>(offset_ + n), dst);
    offset_ += n;
    if (offset_ == chunk.size) {
      free_.push_back(std::move(chunk.data));
      ready_.pop_front();
      offset_ = 0;
      cv_.notify_all();
    }
    return n;
  }

 private:
  static constexpr size_t kChunk = 256 << 10;
  static constexpr size_t kSlots = 3;

  struct Chunk {
    std::vector<char> data;
    size_t size = 0;
  };

  void Produce() {
    while (true) {
      std::vector<char> buf;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !free_.empty() || stop_; });
        if (stop_) {
          done_ = true;
          cv_.notify_all();
          return;
        }
        buf = std::move(free_.back());
        free_.pop_back();
      }
      StatusOr<size_t> n = inner_->Read(buf.data(), buf.size());
      std::lock_guard<std::mutex> lock(mu_);
      if (!n.ok() || *n == 0 || stop_) {
        if (!n.ok()) status_ = n.status();
        done_ = true;
        cv_.notify_all();
        return;
      }
      ready_.push_back(Chunk{std::move(buf), *n});
      cv_.notify_all();
    }
  }

  std::unique_ptr<ByteSource> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> ready_;
  std::vector<std::vector<char>> free_;
  size_t offset_ = 0;
  bool done_ = false;
  bool stop_ = false;
  Status status_;
  std::thread thread_;
};

StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path,
                                                     std::atomic<uint64_t>* progress,
                                                     bool background) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (S_ISDIR(st.st_mode)) return InvalidArgumentError(path + " is a directory");
  FileReader reader(std::move(fd), progress);
  std::string prefix(2, '\0');
  uint64_t dummy = 0;
  VIGIL_ASSIGN_OR_RETURN(size_t n, reader.ReadRaw(prefix.data(), 2, &dummy));
  if (n == 1) {
    VIGIL_ASSIGN_OR_RETURN(size_t m, reader.ReadRaw(prefix.data() + 1, 1, &dummy));
    n += m;
  }
  prefix.resize(n);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (n == 2 && static_cast<unsigned char>(prefix[0]) == 0x1f &&
      static_cast<unsigned char>(prefix[1]) == 0x8b) {
    std::unique_ptr<ByteSource> gz(new GzipSource(std::move(reader), prefix, size));
    if (background) return std::unique_ptr<ByteSource>(new BackgroundSource(std::move(gz)));
    return gz;
  }
  return std::unique_ptr<ByteSource>(new PlainSource(std::move(reader), prefix, size));
}

}  // namespace vigil::trace
