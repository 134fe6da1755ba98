// SPDX-License-Identifier: Apache-2.0
// Few distinct values (pids, tids, streams) as a 16-bit code per row (see packed_column.h).
// Owner: trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "trace/model/column_support.h"

namespace vigil::trace {

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

  friend bool operator==(const DictColumn& a, const DictColumn& b) { return SameValues(a, b); }

 private:
  static constexpr uint16_t kEscape = 0xffff;

  int64_t Wide(size_t i) const { return WideValue(wide_, i); }

  std::vector<uint16_t> codes_;
  std::vector<int64_t> values_;
  std::unordered_map<int64_t, uint16_t> index_;
  WideRows<int64_t> wide_;
};

}  // namespace vigil::trace
