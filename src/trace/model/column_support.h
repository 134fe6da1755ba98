// SPDX-License-Identifier: Apache-2.0
// What the packed columns of the event table share (packed_column.h, dict_column.h,
// index_column.h, near_column.h): an iterator that yields values, and the side table where a
// column keeps the rare value too wide for its rows. Owner: trace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
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

// Equal when the columns read the same values row for row, however they store them.
template <typename Column>
bool SameValues(const Column& a, const Column& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Rows whose values are kept wide, sorted by row: (row, value).
template <typename Value>
using WideRows = std::vector<std::pair<size_t, Value>>;

// The wide value of `row`, which must be in the table.
template <typename Value>
Value WideValue(const WideRows<Value>& wide, size_t row) {
  auto it =
      std::lower_bound(wide.begin(), wide.end(), row,
                       [](const std::pair<size_t, Value>& w, size_t r) { return w.first < r; });
  return it->second;
}

}  // namespace vigil::trace
