// SPDX-License-Identifier: Apache-2.0
// The "[memory]" events of one rank's trace (profile_memory=True), packed like the event table.
// Owner: trace. Built by the reader, then read-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace/model/near_column.h"
#include "trace/model/packed_column.h"

namespace vigil::trace {

// "[memory]" instant events (profile_memory=True).
struct MemoryEvent {
  int64_t ts = 0;
  int64_t bytes = 0;  // + alloc, - free
  int64_t total_allocated = -1;
  int64_t total_reserved = -1;
  int32_t device_id = -1;
  int32_t device_type = -1;  // 0 CPU, 1 CUDA
};

// MemoryEvents packed like the event table (~18 bytes a row instead of 40): a trace of a
// training loop has one per allocation and one per free. Rows read back as MemoryEvent values.
class MemoryTable {
 public:
  using const_iterator = ColumnIterator<MemoryTable, MemoryEvent>;
  using iterator = const_iterator;

  MemoryEvent operator[](size_t i) const {
    return {ts_[i],        bytes_[i],      total_allocated_[i], total_reserved_[i],
            device_id_[i], device_type_[i]};
  }
  int64_t ts(size_t i) const { return ts_[i]; }
  size_t size() const { return ts_.size(); }
  bool empty() const { return ts_.empty(); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }
  void reserve(size_t n) {
    ts_.reserve(n);
    bytes_.reserve(n);
    total_allocated_.reserve(n);
    total_reserved_.reserve(n);
    device_id_.reserve(n);
    device_type_.reserve(n);
  }
  void push_back(const MemoryEvent& m) {
    ts_.push_back(m.ts);
    bytes_.push_back(m.bytes);
    total_allocated_.push_back(m.total_allocated);  // near its neighbours, like a timestamp
    total_reserved_.push_back(m.total_reserved);
    device_id_.push_back(m.device_id);
    device_type_.push_back(m.device_type);
  }

 private:
  TimeColumn ts_;
  PackedColumn<int64_t, int32_t> bytes_;
  TimeColumn total_allocated_;
  TimeColumn total_reserved_;
  PackedColumn<int32_t, int8_t> device_id_;
  PackedColumn<int32_t, int8_t> device_type_;
};

}  // namespace vigil::trace
