// SPDX-License-Identifier: Apache-2.0
#include "trace/reader/kineto_reader.h"

#include <sys/stat.h>
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define VIGIL_GLIBC_MALLOC 1
#endif

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "base/file_util.h"
#include "trace/model/linker.h"
#include "trace/reader/byte_source.h"
#include "trace/reader/event_decoder.h"
#include "trace/reader/json_skip.h"

namespace vigil::trace {
namespace {

// Hands freed pages back to the system. Only with glibc's own allocator: a sanitizer replaces it,
// and glibc's malloc_trim then walks arenas that were never set up (it crashes on reader threads).
void ReleaseFreedMemory() {
#if defined(VIGIL_GLIBC_MALLOC)
  malloc_trim(0);
#endif
}

constexpr size_t kPadding = 64;  // >= SIMDJSON_PADDING and kJsonSkipPadding
static_assert(kPadding >= kJsonSkipPadding);
constexpr size_t kMaxBatch = 2048;

bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A sliding window over the decompressed text. Positions are offsets into buf_; Compact() moves
// the unconsumed tail to the front, so offsets held by the caller are rebased by the return
// value.
class Window {
 public:
  Window(ByteSource* src, size_t size) : src_(src), buf_(size + kPadding, '\0') {}

  char* data() { return buf_.data(); }
  size_t end() const { return end_; }
  size_t capacity() const { return buf_.size(); }
  bool eof() const { return eof_; }
  uint64_t consumed_before() const { return base_; }

  // Keeps [keep_from, end) and reads more after it. Returns how far positions moved left.
  StatusOr<size_t> Refill(size_t keep_from) {
    size_t shift = keep_from;
    if (shift > 0) {
      std::memmove(buf_.data(), buf_.data() + shift, end_ - shift);
      end_ -= shift;
      base_ += shift;
    }
    if (buf_.size() - kPadding - end_ < buf_.size() / 4) {
      buf_.resize(buf_.size() * 2);  // one event larger than the window
    }
    size_t room = buf_.size() - kPadding - end_;
    VIGIL_ASSIGN_OR_RETURN(size_t n, src_->Read(buf_.data() + end_, room));
    if (n == 0) eof_ = true;
    end_ += n;
    std::memset(buf_.data() + end_, ' ', std::min(kPadding, buf_.size() - end_));
    return shift;
  }

 private:
  ByteSource* src_;
  std::vector<char> buf_;
  size_t end_ = 0;
  uint64_t base_ = 0;
  bool eof_ = false;
};

class TraceParser {
 public:
  TraceParser(ByteSource* src, RankTrace* out, size_t window)
      : src_(src), out_(out), win_(src, window), decoder_(out) {}

  Status Run() {
    VIGIL_ASSIGN_OR_RETURN(size_t shift, win_.Refill(0));
    (void)shift;
    size_t p = 0;
    VIGIL_RETURN_IF_ERROR(SkipWs(&p));
    if (p >= win_.end()) {
      if (out_->quality.bytes_read == 0 && !src_->truncated()) {
        return DataLossError("empty trace file");
      }
      return Truncated("no JSON in file");
    }
    if (win_.data()[p] != '{') return InvalidArgumentError("not a Kineto trace: no JSON object");
    ++p;
    while (true) {
      VIGIL_RETURN_IF_ERROR(SkipWs(&p));
      if (p >= win_.end()) return Truncated("file ends inside the top-level object");
      char c = win_.data()[p];
      if (c == '}') break;
      if (c == ',') {
        ++p;
        continue;
      }
      if (c != '"') return InvalidArgumentError("malformed top-level key");
      size_t key_end = std::string::npos;
      VIGIL_RETURN_IF_ERROR(NeedValue(&p, &key_end));
      if (key_end == std::string::npos) return Truncated("file ends inside a key");
      std::string key(win_.data() + p + 1, key_end - p - 2);
      p = key_end;
      VIGIL_RETURN_IF_ERROR(SkipWs(&p));
      if (p >= win_.end() || win_.data()[p] != ':') return Truncated("file ends after a key");
      ++p;
      VIGIL_RETURN_IF_ERROR(SkipWs(&p));
      if (p >= win_.end()) return Truncated("file ends after a key");
      if (key == "traceEvents" && win_.data()[p] == '[') {
        VIGIL_RETURN_IF_ERROR(ParseEvents(&p));
        if (out_->quality.truncated) return OkStatus();
        continue;
      }
      size_t value_end = std::string::npos;
      VIGIL_RETURN_IF_ERROR(NeedValue(&p, &value_end));
      if (value_end == std::string::npos) return Truncated("file ends inside " + key);
      decoder_.DecodeMetadata(key, std::string_view(win_.data() + p, value_end - p));
      p = value_end;
    }
    out_->quality.bytes_read = win_.consumed_before() + p + 1;
    if (src_->truncated()) return Truncated(src_->truncation_detail());
    return OkStatus();
  }

 private:
  Status Truncated(std::string detail) {
    out_->quality.truncated = true;
    out_->quality.truncation_detail =
        src_->truncated() ? src_->truncation_detail() : std::move(detail);
    if (out_->quality.bytes_read == 0)
      out_->quality.bytes_read = win_.consumed_before() + win_.end();
    return OkStatus();
  }

  // Makes sure the window holds [*p, ...) and skips whitespace, refilling as needed.
  Status SkipWs(size_t* p) {
    while (true) {
      while (*p < win_.end() && IsWs(win_.data()[*p])) ++*p;
      if (*p < win_.end() || win_.eof()) return OkStatus();
      VIGIL_ASSIGN_OR_RETURN(size_t shift, win_.Refill(*p));
      *p -= shift;
    }
  }

  // Finds the end of the value at *p, refilling (and rebasing *p) until it fits or EOF.
  Status NeedValue(size_t* p, size_t* value_end) {
    while (true) {
      *value_end = SkipJsonValue(win_.data(), *p, win_.end());
      if (*value_end != std::string::npos || win_.eof()) return OkStatus();
      VIGIL_ASSIGN_OR_RETURN(size_t shift, win_.Refill(*p));
      *p -= shift;
    }
  }

  // *p is at '['. Events are cut into batches at element boundaries; each batch is rewritten in
  // place as a JSON array (its leading separator becomes '[', its trailing one ']').
  Status ParseEvents(size_t* p) {
    size_t sep = *p;  // position of '[' or ',' before the next element
    std::vector<std::pair<size_t, size_t>> elems;
    while (true) {
      elems.clear();
      size_t q = sep + 1;
      size_t batch_end = std::string::npos;  // position of the separator after the last element
      bool array_closed = false;
      while (elems.size() < kMaxBatch) {
        while (q < win_.end() && IsWs(win_.data()[q])) ++q;
        if (q >= win_.end()) break;
        char c = win_.data()[q];
        if (c == ']' && elems.empty()) {
          array_closed = true;
          batch_end = q;
          break;
        }
        if (c != '{') {
          // Not an object: skip it (and count it).
          size_t e = SkipJsonValue(win_.data(), q, win_.end());
          if (e == std::string::npos) break;
          ++out_->quality.events_unparsable;
          q = e;
          while (q < win_.end() && IsWs(win_.data()[q])) ++q;
          if (q >= win_.end()) break;
          if (win_.data()[q] == ',' && elems.empty()) {
            sep = q;
            ++q;
            continue;
          }
          if (win_.data()[q] == ']' && elems.empty()) {
            array_closed = true;
            batch_end = q;
          }
          break;
        }
        size_t e = SkipJsonValue(win_.data(), q, win_.end());
        if (e == std::string::npos) break;
        size_t s = e;
        while (s < win_.end() && IsWs(win_.data()[s])) ++s;
        if (s >= win_.end()) break;
        char next = win_.data()[s];
        if (next != ',' && next != ']') return InvalidArgumentError("malformed traceEvents");
        elems.emplace_back(q, e);
        batch_end = s;
        q = s + 1;
        if (next == ']') {
          array_closed = true;
          break;
        }
      }
      if (!elems.empty()) {
        VIGIL_RETURN_IF_ERROR(DecodeBatch(sep, batch_end, elems));
        sep = batch_end;
        if (array_closed) {
          *p = batch_end + 1;
          return OkStatus();
        }
        continue;
      }
      if (array_closed) {
        *p = batch_end + 1;
        return OkStatus();
      }
      if (win_.eof()) {
        out_->quality.bytes_read = win_.consumed_before() + win_.end();
        return Truncated("file ends inside traceEvents");
      }
      VIGIL_ASSIGN_OR_RETURN(size_t shift, win_.Refill(sep));
      sep -= shift;
    }
  }

  Status DecodeBatch(size_t sep, size_t batch_end,
                     const std::vector<std::pair<size_t, size_t>>& elems) {
    char* d = win_.data();
    const char saved_open = d[sep];
    const char saved_close = d[batch_end];
    d[sep] = '[';
    d[batch_end] = ']';
    size_t decoded = 0;
    Status st = decoder_.DecodeArray(d + sep, batch_end - sep + 1, win_.capacity() - sep, &decoded);
    d[sep] = saved_open;
    d[batch_end] = saved_close;
    if (st.ok()) return OkStatus();
    // A bad event: decode the rest one by one so one odd event does not lose its neighbours.
    for (size_t i = decoded; i < elems.size(); ++i) {
      auto [b, e] = elems[i];
      Status one = decoder_.DecodeObject(d + b, e - b, win_.capacity() - b);
      if (!one.ok()) ++out_->quality.events_unparsable;
    }
    return OkStatus();
  }

  ByteSource* src_;
  RankTrace* out_;
  Window win_;
  EventDecoder decoder_;
};

// Sizes the tables from the expected JSON size so they never grow by copying. Reserved capacity
// costs address space only: the pages a table does not fill are never touched, so they are not
// resident. Stored Kineto rows take 400+ bytes of JSON each (python_function rows are not
// stored), hence the divisors; a trace denser than that grows its tables as usual.
void ReserveFromSize(uint64_t json_bytes, RankTrace* t) {
  constexpr uint64_t kMaxRows = uint64_t{1} << 26;
  if (json_bytes == 0) return;
  t->events.Reserve(static_cast<size_t>(std::min(json_bytes / 128, kMaxRows)));
  if (t->keep_flows) t->flows.reserve(static_cast<size_t>(std::min(json_bytes / 256, kMaxRows)));
  t->memory.reserve(static_cast<size_t>(std::min(json_bytes / 1024, kMaxRows)));
}

}  // namespace

int RankFromFileName(std::string_view name) {
  static constexpr std::string_view kKeys[] = {"rank-", "rank_", "_rank", "rank"};
  for (std::string_view key : kKeys) {
    size_t pos = name.find(key);
    while (pos != std::string_view::npos) {
      size_t i = pos + key.size();
      size_t j = i;
      while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
      if (j > i && j - i < 9) {
        int v = 0;
        for (size_t k = i; k < j; ++k) v = v * 10 + (name[k] - '0');
        return v;
      }
      pos = name.find(key, pos + 1);
    }
  }
  return -1;
}

StatusOr<RankTrace> ReadTraceFile(const std::string& path, const ReadOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(auto src,
                         OpenByteSource(path, options.progress_bytes, options.background_inflate));
  RankTrace trace;
  trace.path = path;
  trace.keep_python_functions = options.keep_python_functions;
  trace.keep_flows = options.keep_flows;
  ReserveFromSize(src->uncompressed_size_hint(), &trace);
  TraceParser parser(src.get(), &trace, options.window_bytes);
  VIGIL_RETURN_IF_ERROR(parser.Run().WithContext(path));
  if (trace.meta.rank < 0) {
    size_t slash = path.find_last_of('/');
    int r = RankFromFileName(slash == std::string::npos ? path : path.substr(slash + 1));
    if (r >= 0) {
      trace.meta.rank = r;
      trace.meta.rank_from_file_name = true;
    }
  }
  return trace;
}

StatusOr<std::vector<std::string>> ListTraceFiles(const std::string& dir, uint64_t* bytes) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(dir));
  std::vector<std::string> files;
  uint64_t total = 0;
  for (const std::string& n : names) {
    bool json = n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0;
    bool gz = n.size() > 8 && n.compare(n.size() - 8, 8, ".json.gz") == 0;
    if (!json && !gz) continue;
    std::string full = JoinPath(dir, n);
    struct stat st {};
    if (::stat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    total += static_cast<uint64_t>(st.st_size);
    files.push_back(std::move(full));
  }
  std::sort(files.begin(), files.end());
  if (bytes != nullptr) *bytes = total;
  return files;
}

StatusOr<std::vector<RankTrace>> ReadTraces(const std::string& path, const ReadOptions& options) {
  std::vector<std::string> files;
  if (IsDirectory(path)) {
    VIGIL_ASSIGN_OR_RETURN(files, ListTraceFiles(path, nullptr));
    if (files.empty()) return NotFoundError("no *.json or *.json.gz trace files in " + path);
  } else {
    files.push_back(path);
  }
  return ReadTraceFiles(files, options);
}

StatusOr<std::vector<RankTrace>> ReadTraceFiles(const std::vector<std::string>& files,
                                                const ReadOptions& options) {
  if (files.empty()) return InvalidArgumentError("no trace files to read");
  std::vector<StatusOr<RankTrace>> results(files.size(), StatusOr<RankTrace>(CancelledError("")));
  unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                         : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(files.size()));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      results[i] = ReadTraceFile(files[i], options);
      ReleaseFreedMemory();  // The reader's window and parser, before linking.
      if (results[i].ok()) LinkTrace(&*results[i]);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  // The decode windows, parsers and inflate buffers are freed now; hand their pages (held in
  // each reading thread's malloc arena) back before the analyses allocate theirs.
  ReleaseFreedMemory();
  std::vector<RankTrace> out;
  out.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) return results[i].status();
    out.push_back(std::move(*results[i]));
  }
  // Ranks: distributedInfo or file name; otherwise the file order. Duplicates keep file order.
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].meta.rank < 0) out[i].meta.rank = static_cast<int32_t>(i);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankTrace& a, const RankTrace& b) {
    return a.meta.rank < b.meta.rank;
  });
  return out;
}

}  // namespace vigil::trace
