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

constexpr size_t kInChunk = 1 << 20;

class FileReader {
 public:
  FileReader(ScopedFd fd, std::atomic<uint64_t>* progress)
      : fd_(std::move(fd)), progress_(progress) {}
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

// Runs another source on a producer thread, a bounded number of chunks ahead.
class BackgroundSource : public ByteSource {
 public:
  explicit BackgroundSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {
    file_size_ = inner_->file_size();
    gzip_ = inner_->is_gzip();
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
    std::vector<char>& chunk = ready_.front();
    size_t n = std::min(cap, chunk.size() - offset_);
    std::copy(chunk.begin() + static_cast<ptrdiff_t>(offset_),
              chunk.begin() + static_cast<ptrdiff_t>(offset_ + n), dst);
    offset_ += n;
    if (offset_ == chunk.size()) {
      ready_.pop_front();
      offset_ = 0;
      cv_.notify_all();
    }
    return n;
  }

 private:
  static constexpr size_t kChunk = 1 << 20;
  static constexpr size_t kAhead = 4;

  void Produce() {
    while (true) {
      std::vector<char> chunk(kChunk);
      StatusOr<size_t> n = inner_->Read(chunk.data(), chunk.size());
      std::unique_lock<std::mutex> lock(mu_);
      if (!n.ok() || *n == 0 || stop_) {
        if (!n.ok()) status_ = n.status();
        done_ = true;
        cv_.notify_all();
        return;
      }
      chunk.resize(*n);
      ready_.push_back(std::move(chunk));
      cv_.notify_all();
      cv_.wait(lock, [this] { return ready_.size() < kAhead || stop_; });
      if (stop_) {
        done_ = true;
        return;
      }
    }
  }

  std::unique_ptr<ByteSource> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> ready_;
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
