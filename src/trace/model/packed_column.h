// SPDX-License-Identifier: Apache-2.0
// Columns of the event table stored narrower than the values they return, so the table of a
// multi-GB trace costs ~30 bytes a row instead of ~90:
//  - PackedColumn: durations, ids and byte counts nearly always fit in 8-32 bits; each row stores
//    that, and the rare value that does not fit (or equals the escape code) goes to a side table.
//  - DictColumn: pids, tids and streams take a handful of distinct values; rows store a 16-bit
//    code into a table of them.
//  - IndexColumn: indexes into a side array (kernel args, op args) that only some rows have; a
//    bit per row plus a running count finds them (and stores nothing while they count up).
//  - TimeColumn: timestamps as 32-bit offsets from a per-256-rows base.
//  - IdColumn: correlation and External ids as 16-bit offsets from a per-256-rows base, with a
//    code for the rows that have none (-1).
// Reading a row gives the exact wide value. Appended by the reader, then read-only like the rest
// of RankTrace (safe to read from several threads).
// Owner: trace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vigil::trace {

// Input iterator over any column with operator[]; yields values, not references.
template <typename Column, typename Value>
class ColumnIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Value;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = Value;

  ColumnIterator() = default;
  ColumnIterator(const Column* c, size_t i) : c_(c), i_(i) {}
  Value operator*() const { return (*c_)[i_]; }
  ColumnIterator& operator++() {
    ++i_;
    return *this;
  }
  ColumnIterator operator++(int) {
    ColumnIterator old = *this;
    ++i_;
    return old;
  }
  bool operator==(const ColumnIterator& o) const { return i_ == o.i_; }
  bool operator!=(const ColumnIterator& o) const { return i_ != o.i_; }

 private:
  const Column* c_ = nullptr;
  size_t i_ = 0;
};

template <typename Value, typename Stored>
class PackedColumn {
  static_assert(std::is_integral_v<Value> && std::is_integral_v<Stored>);
  static_assert(sizeof(Stored) < sizeof(Value));

 public:
  using value_type = Value;
  using size_type = size_t;

  using const_iterator = ColumnIterator<PackedColumn, Value>;
  using iterator = const_iterator;

  Value operator[](size_t i) const {
    const Stored s = rows_[i];
    if (s != kEscape) [[likely]] {
      return static_cast<Value>(s);
    }
    return Wide(i);
  }
  Value back() const { return (*this)[rows_.size() - 1]; }
  size_t size() const { return rows_.size(); }
  bool empty() const { return rows_.empty(); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, rows_.size()); }

  void reserve(size_t n) { rows_.reserve(n); }
  void push_back(Value v) {
    if (Fits(v)) [[likely]] {
      rows_.push_back(static_cast<Stored>(v));
      return;
    }
    wide_.emplace_back(rows_.size(), v);
    rows_.push_back(kEscape);
  }
  void clear() {
    rows_.clear();
    wide_.clear();
  }
  // Rows that needed the side table (for tests and memory accounting).
  size_t wide_rows() const { return wide_.size(); }
  size_t memory_bytes() const {
    return rows_.capacity() * sizeof(Stored) + wide_.capacity() * sizeof(wide_[0]);
  }

  friend bool operator==(const PackedColumn& a, const PackedColumn& b) {
    return a.rows_ == b.rows_ && a.wide_ == b.wide_;
  }

 private:
  static constexpr Stored kEscape = std::is_signed_v<Stored> ? std::numeric_limits<Stored>::min()
                                                             : std::numeric_limits<Stored>::max();

  static bool Fits(Value v) {
    if constexpr (std::is_signed_v<Value> == std::is_signed_v<Stored>) {
      return v >= static_cast<Value>(std::numeric_limits<Stored>::min()) &&
             v <= static_cast<Value>(std::numeric_limits<Stored>::max()) &&
             v != static_cast<Value>(kEscape);
    } else {
      static_assert(std::is_signed_v<Value> == std::is_signed_v<Stored>,
                    "value and storage must agree in signedness");
      return false;
    }
  }

  // Rows are appended in order, so the side table is sorted by row.
  Value Wide(size_t i) const {
    auto it = std::lower_bound(
        wide_.begin(), wide_.end(), i,
        [](const std::pair<size_t, Value>& w, size_t row) { return w.first < row; });
    return it->second;
  }

  std::vector<Stored> rows_;
  std::vector<std::pair<size_t, Value>> wide_;
};

// Few distinct values (pids, tids, streams): a 16-bit code per row. Past 65535 distinct values
// the rest are stored wide in a side table, like PackedColumn.
class DictColumn {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using const_iterator = ColumnIterator<DictColumn, int64_t>;
  using iterator = const_iterator;

  int64_t operator[](size_t i) const {
    const uint16_t c = codes_[i];
    if (c != kEscape) [[likely]] {
      return values_[c];
    }
    return Wide(i);
  }
  size_t size() const { return codes_.size(); }
  bool empty() const { return codes_.empty(); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, codes_.size()); }

  void reserve(size_t n) { codes_.reserve(n); }
  void push_back(int64_t v) {
    // Consecutive rows mostly repeat the value (one thread's events follow each other).
    if (!codes_.empty() && codes_.back() != kEscape && values_[codes_.back()] == v) {
      codes_.push_back(codes_.back());
      return;
    }
    auto it = index_.find(v);
    if (it != index_.end()) {
      codes_.push_back(it->second);
      return;
    }
    if (values_.size() < kEscape) {
      const uint16_t c = static_cast<uint16_t>(values_.size());
      values_.push_back(v);
      index_.emplace(v, c);
      codes_.push_back(c);
      return;
    }
    wide_.emplace_back(codes_.size(), v);
    codes_.push_back(kEscape);
  }
  void clear() {
    codes_.clear();
    values_.clear();
    index_.clear();
    wide_.clear();
  }
  size_t distinct_values() const { return values_.size(); }
  size_t wide_rows() const { return wide_.size(); }

  friend bool operator==(const DictColumn& a, const DictColumn& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

 private:
  static constexpr uint16_t kEscape = 0xffff;

  int64_t Wide(size_t i) const {
    auto it = std::lower_bound(
        wide_.begin(), wide_.end(), i,
        [](const std::pair<size_t, int64_t>& w, size_t row) { return w.first < row; });
    return it->second;
  }

  std::vector<uint16_t> codes_;
  std::vector<int64_t> values_;
  std::unordered_map<int64_t, uint16_t> index_;
  std::vector<std::pair<size_t, int64_t>> wide_;
};

// Per row: an index into a side array, or kNoIndexValue. Only some rows have one (kernels have
// kernel args), so a bit per row and a running count per 64 rows say which and where: the n-th
// row that has an index stores it at values_[n], or, while the indexes simply count up in row
// order (0, 1, 2, ...), stores nothing at all.
class IndexColumn {
 public:
  static constexpr uint32_t kNoIndexValue = 0xffffffffu;
  using value_type = uint32_t;
  using size_type = size_t;
  using const_iterator = ColumnIterator<IndexColumn, uint32_t>;
  using iterator = const_iterator;

  uint32_t operator[](size_t i) const {
    const uint64_t word = bits_[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if ((word & bit) == 0) return kNoIndexValue;
    const uint32_t n =
        base_[i >> 6] + static_cast<uint32_t>(__builtin_popcountll(word & (bit - 1)));
    return values_.empty() ? n : values_[n];
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

  void reserve(size_t n) {
    bits_.reserve((n + 63) / 64);
    base_.reserve((n + 63) / 64);
  }
  void push_back(uint32_t v) {
    if ((size_ & 63) == 0) {
      bits_.push_back(0);
      base_.push_back(count_);
    }
    if (v != kNoIndexValue) {
      if (values_.empty() && v != count_) {
        // Indexes stop counting up (shared side entries): store them from now on.
        values_.reserve(count_ + 1);
        for (uint32_t k = 0; k < count_; ++k) values_.push_back(k);
      }
      if (!values_.empty() || v != count_) values_.push_back(v);
      bits_.back() |= uint64_t{1} << (size_ & 63);
      ++count_;
    }
    ++size_;
  }
  void clear() {
    bits_.clear();
    base_.clear();
    values_.clear();
    size_ = 0;
    count_ = 0;
  }
  // Rows that have an index.
  size_t indexed_rows() const { return count_; }
  // A column of values[i] for every row (kNoIndexValue: none).
  static IndexColumn FromValues(const std::vector<uint32_t>& values) {
    IndexColumn c;
    c.reserve(values.size());
    c.values_.reserve(static_cast<size_t>(std::count_if(
        values.begin(), values.end(), [](uint32_t v) { return v != kNoIndexValue; })));
    for (uint32_t v : values) c.push_back(v);
    return c;
  }

  friend bool operator==(const IndexColumn& a, const IndexColumn& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> base_;    // rows with an index before each 64-row word
  std::vector<uint32_t> values_;  // the indexes, once they stop counting up
  size_t size_ = 0;
  uint32_t count_ = 0;
};

// Values near their neighbours in row order: each block of 256 rows stores the first value it
// holds and a narrow offset a row from it; the rare value further away goes to a side table. With
// kHasNone, -1 (a row without a value) has a code of its own.
template <typename Delta, bool kHasNone>
class NearColumn {
  static_assert(std::is_signed_v<Delta> && sizeof(Delta) < sizeof(int64_t));

 public:
  using value_type = int64_t;
  using size_type = size_t;
  using const_iterator = ColumnIterator<NearColumn, int64_t>;
  using iterator = const_iterator;

  int64_t operator[](size_t i) const {
    const Delta d = deltas_[i];
    if (d > kEscape) [[likely]] {
      return bases_[i >> kBlockBits] + d;
    }
    if constexpr (kHasNone) {
      if (d == kNone) return -1;
    }
    return Wide(i);
  }
  int64_t back() const { return (*this)[deltas_.size() - 1]; }
  size_t size() const { return deltas_.size(); }
  bool empty() const { return deltas_.empty(); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, deltas_.size()); }

  void reserve(size_t n) {
    deltas_.reserve(n);
    bases_.reserve((n >> kBlockBits) + 1);
  }
  void push_back(int64_t v) {
    const size_t i = deltas_.size();
    if ((i & ((size_t{1} << kBlockBits) - 1)) == 0) {
      bases_.push_back(0);
      block_has_base_ = false;
    }
    if (kHasNone && v == -1) {
      deltas_.push_back(kNone);
      return;
    }
    if (!block_has_base_) {
      bases_.back() = v;
      block_has_base_ = true;
    }
    int64_t d = 0;
    const bool near = !__builtin_sub_overflow(v, bases_.back(), &d) && d > kEscape &&
                      d <= std::numeric_limits<Delta>::max();
    if (near) [[likely]] {
      deltas_.push_back(static_cast<Delta>(d));
      return;
    }
    wide_.emplace_back(i, v);
    deltas_.push_back(kEscape);
  }
  void clear() {
    deltas_.clear();
    bases_.clear();
    wide_.clear();
  }
  size_t wide_rows() const { return wide_.size(); }

  friend bool operator==(const NearColumn& a, const NearColumn& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

 private:
  static constexpr int kBlockBits = 8;
  static constexpr Delta kNone = std::numeric_limits<Delta>::min();  // only with kHasNone
  static constexpr Delta kEscape = kHasNone ? kNone + 1 : kNone;

  int64_t Wide(size_t i) const {
    auto it = std::lower_bound(
        wide_.begin(), wide_.end(), i,
        [](const std::pair<size_t, int64_t>& w, size_t row) { return w.first < row; });
    return it->second;
  }

  std::vector<Delta> deltas_;
  std::vector<int64_t> bases_;
  std::vector<std::pair<size_t, int64_t>> wide_;
  bool block_has_base_ = false;
};

// Timestamps: rows near each other in the file are near each other in time (±2.1 s in ns).
using TimeColumn = NearColumn<int32_t, false>;

// Ids the profiler hands out in order (correlation, External id): close to the ids of nearby
// rows, and -1 on the rows that have none.
using IdColumn = NearColumn<int16_t, true>;

}  // namespace vigil::trace
