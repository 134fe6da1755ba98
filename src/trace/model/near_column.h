// SPDX-License-Identifier: Apache-2.0
// Values near their neighbours in row order, timestamps and ids, as narrow offsets from a
// per-256-rows base (see packed_column.h). Owner: trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "trace/model/column_support.h"

namespace vigil::trace {

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

  friend bool operator==(const NearColumn& a, const NearColumn& b) { return SameValues(a, b); }

 private:
  static constexpr int kBlockBits = 8;
  static constexpr Delta kNone = std::numeric_limits<Delta>::min();  // only with kHasNone
  static constexpr Delta kEscape = kHasNone ? kNone + 1 : kNone;

  int64_t Wide(size_t i) const { return WideValue(wide_, i); }

  std::vector<Delta> deltas_;
  std::vector<int64_t> bases_;
  WideRows<int64_t> wide_;
  bool block_has_base_ = false;
};

// Timestamps: rows near each other in the file are near each other in time (±2.1 s in ns).
using TimeColumn = NearColumn<int32_t, false>;

// Ids the profiler hands out in order (correlation, External id): close to the ids of nearby
// rows, and -1 on the rows that have none.
using IdColumn = NearColumn<int16_t, true>;

}  // namespace vigil::trace
