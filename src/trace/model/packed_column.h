// SPDX-License-Identifier: Apache-2.0
// Columns of the event table stored narrower than the values they return, so the table of a
// multi-GB trace costs ~30 bytes a row instead of ~90. Reading a row gives the exact wide value.
// Appended by the reader, then read-only like the rest of RankTrace (safe to read from several
// threads). The kinds:
//  - PackedColumn (here): durations and byte counts nearly always fit in 8-32 bits; each row
//    stores that, and the rare value that does not fit (or equals the escape code) goes to a
//    side table.
//  - DictColumn (dict_column.h): pids, tids and streams, a 16-bit code into a table of values.
//  - IndexColumn (index_column.h): indexes into a side array that only some rows have.
//  - NearColumn (near_column.h): timestamps and ids as offsets from a per-256-rows base.
// Owner: trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "trace/model/column_support.h"

namespace vigil::trace {

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
  Value Wide(size_t i) const { return WideValue(wide_, i); }

  std::vector<Stored> rows_;
  WideRows<Value> wide_;
};

}  // namespace vigil::trace
