// SPDX-License-Identifier: Apache-2.0
#include "trace/model/trace_model.h"

namespace vigil::trace {

EventKind KindFromCategory(std::string_view cat, bool* known) {
  *known = true;
  if (cat == "kernel" || cat == "Kernel" || cat == "mtia_ccp_events") return EventKind::kKernel;
  if (cat == "cpu_op" || cat == "Operator") return EventKind::kCpuOp;
  if (cat == "cuda_runtime" || cat == "Runtime" || cat == "mtia_runtime")
    return EventKind::kRuntime;
  if (cat == "python_function") return EventKind::kPythonFunction;
  if (cat == "user_annotation") return EventKind::kUserAnnotation;
  if (cat == "cuda_driver") return EventKind::kDriver;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return EventKind::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return EventKind::kMemset;
  if (cat == "gpu_user_annotation") return EventKind::kGpuUserAnnotation;
  if (cat == "cuda_sync") return EventKind::kCudaSync;
  if (cat == "Trace") return EventKind::kTraceSpan;
  *known = cat == "overhead" || cat == "cuda_profiler_range" || cat == "Python" ||
           cat == "python" || cat == "Overhead";
  return EventKind::kOther;
}

std::string_view KindName(EventKind kind) {
  switch (kind) {
    case EventKind::kCpuOp:
      return "cpu_op";
    case EventKind::kUserAnnotation:
      return "user_annotation";
    case EventKind::kPythonFunction:
      return "python_function";
    case EventKind::kRuntime:
      return "runtime";
    case EventKind::kDriver:
      return "driver";
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kMemcpy:
      return "memcpy";
    case EventKind::kMemset:
      return "memset";
    case EventKind::kGpuUserAnnotation:
      return "gpu_user_annotation";
    case EventKind::kCudaSync:
      return "cuda_sync";
    case EventKind::kTraceSpan:
      return "trace";
    case EventKind::kOther:
      return "other";
  }
  return "other";
}

uint32_t StringTable::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(strings_.back(), id);
  return id;
}

StringTable::StringTable(const StringTable& other) : strings_(other.strings_) {
  for (uint32_t i = 0; i < strings_.size(); ++i) index_.emplace(strings_[i], i);
}

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) {
    strings_ = other.strings_;
    index_.clear();
    for (uint32_t i = 0; i < strings_.size(); ++i) index_.emplace(strings_[i], i);
  }
  return *this;
}

uint32_t StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNoIndex : it->second;
}

void EventTable::Reserve(size_t n) {
  ts.reserve(n);
  dur.reserve(n);
  name.reserve(n);
  cat.reserve(n);
  kind.reserve(n);
  pid.reserve(n);
  tid.reserve(n);
  stream.reserve(n);
  device.reserve(n);
  correlation.reserve(n);
  external_id.reserve(n);
  bytes.reserve(n);
  kargs.reserve(n);
  oargs.reserve(n);
  shapes.reserve(n);
}

}  // namespace vigil::trace
