// SPDX-License-Identifier: Apache-2.0
// Indexes into a side array that only some rows have, a bit per row (see packed_column.h).
// Owner: trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/model/column_support.h"

namespace vigil::trace {

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

  friend bool operator==(const IndexColumn& a, const IndexColumn& b) { return SameValues(a, b); }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> base_;    // rows with an index before each 64-row word
  std::vector<uint32_t> values_;  // the indexes, once they stop counting up
  size_t size_ = 0;
  uint32_t count_ = 0;
};

}  // namespace vigil::trace
