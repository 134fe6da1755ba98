// SPDX-License-Identifier: Apache-2.0
#include "snoop/python_stacks.h"

#include <algorithm>
#include <utility>

#include <bpf/bpf.h>
#include <fmt/format.h>

namespace vigil::snoop {
namespace {

constexpr size_t kMaxNewThreads = 1024;  // py_new_threads' size.

uint32_t U32(uint64_t v) { return static_cast<uint32_t>(v); }

}  // namespace

StatusOr<py_layout> PythonLayout(const PythonOffsets& o) {
  py_layout l{};
  uint64_t size = 0;
  l.tstate_native_thread_id = U32(o.tstate_native_thread_id);
  l.frame_code = U32(o.frame_code);
  l.frame_previous = U32(o.frame_previous);
  if (o.frame_model == FrameModel::kFrameObject) {
    l.model = VS_PY_FRAME_OBJECT;
    l.tstate_frame = U32(o.tstate_frame);
    l.frame_position = U32(o.frame_lasti);
    size = std::max({o.frame_code + 8, o.frame_previous + 8, o.frame_lasti + 4});
  } else {
    l.model = VS_PY_INTERP_FRAME;
    l.tstate_cframe = U32(o.tstate_cframe);
    l.cframe_current_frame = U32(o.cframe_current_frame);
    l.tstate_current_frame = U32(o.tstate_current_frame);
    l.frame_position = U32(o.frame_prev_instr);
    size = std::max({o.frame_code + 8, o.frame_previous + 8, o.frame_prev_instr + 8});
    if (o.entry_mark == EntryMark::kShimFrame) {
      l.entry_mark = VS_PY_ENTRY_SHIM;
      l.frame_owner = U32(o.frame_owner);
      size = std::max(size, o.frame_owner + 1);
    } else {
      l.entry_mark = VS_PY_ENTRY_FLAG;
      l.frame_is_entry = U32(o.frame_is_entry);
      size = std::max(size, o.frame_is_entry + 1);
    }
  }
  if (size > VS_PY_WINDOW) {
    return InvalidArgumentError(fmt::format(
        "CPython {}.{}: a frame's fields span {} bytes, more than the {} the probes read", o.major,
        o.minor, size, VS_PY_WINDOW));
  }
  l.frame_read_size = U32(size);
  return l;
}

PythonStacks::PythonStacks(std::string proc_root, PythonStacksFds fds)
    : proc_root_(std::move(proc_root)), fds_(fds) {}

PythonStacks::~PythonStacks() = default;

Status PythonStacks::Add(int pid) {
  Remove(pid);  // A pid seen again is a new process.
  StatusOr<std::unique_ptr<PythonProcess>> python = PythonProcess::Attach(pid, proc_root_);
  if (!python.ok()) {
    if (python.status().code() == StatusCode::kNotFound) return OkStatus();  // Not CPython.
    return python.status();
  }
  StatusOr<py_layout> layout = PythonLayout((*python)->offsets());
  if (!layout.ok()) return layout.status().WithContext(fmt::format("pid {}", pid));
  Process& process = processes_[pid];
  process.python = std::move(*python);
  // Threads first, so the first call after the layout lands already finds its thread.
  WriteThreads(pid, process);
  uint32_t key = static_cast<uint32_t>(pid);
  if (bpf_map_update_elem(fds_.procs, &key, &*layout, BPF_ANY) != 0) {
    Status s = ErrnoStatus(errno, fmt::format("pid {}: recording its Python layout", pid));
    Remove(pid);
    return s;
  }
  return OkStatus();
}

void PythonStacks::Remove(int pid) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  uint32_t key = static_cast<uint32_t>(pid);
  bpf_map_delete_elem(fds_.procs, &key);
  for (int tid : it->second.tids) {
    thread_key k{key, static_cast<uint32_t>(tid)};
    bpf_map_delete_elem(fds_.threads, &k);
  }
  processes_.erase(it);
}

void PythonStacks::WriteThreads(int pid, Process& process) {
  std::set<int> now;
  for (auto [tid, tstate] : process.python->ThreadStatesByTid()) {
    if (tid <= 0 || tstate == 0) continue;
    thread_key k{static_cast<uint32_t>(pid), static_cast<uint32_t>(tid)};
    if (bpf_map_update_elem(fds_.threads, &k, &tstate, BPF_ANY) == 0) now.insert(tid);
  }
  for (int tid : process.tids) {
    if (now.count(tid)) continue;
    thread_key k{static_cast<uint32_t>(pid), static_cast<uint32_t>(tid)};
    bpf_map_delete_elem(fds_.threads, &k);  // A thread that ended.
  }
  process.tids = std::move(now);
  process.refreshed = std::chrono::steady_clock::now();
}

std::set<int> PythonStacks::TakeNewThreadPids() {
  std::vector<thread_key> keys;
  thread_key key{};
  thread_key next{};
  bool first = true;
  while (keys.size() < kMaxNewThreads &&
         bpf_map_get_next_key(fds_.new_threads, first ? nullptr : &key, &next) == 0) {
    keys.push_back(next);
    key = next;
    first = false;
  }
  std::set<int> pids;
  for (const thread_key& k : keys) {
    bpf_map_delete_elem(fds_.new_threads, &k);
    pids.insert(static_cast<int>(k.pid));
  }
  return pids;
}

void PythonStacks::Refresh(std::chrono::milliseconds interval) {
  std::set<int> noted = TakeNewThreadPids();
  auto now = std::chrono::steady_clock::now();
  for (auto& [pid, process] : processes_) {
    if (noted.count(pid) || process.tids.empty() || now - process.refreshed >= interval) {
      WriteThreads(pid, process);
    }
  }
}

std::string PythonStacks::Module(int pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? "" : it->second.python->module();
}

std::string PythonStacks::Version(int pid) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return "";
  return fmt::format("{}.{}", it->second.python->major(), it->second.python->minor());
}

StatusOr<std::vector<PythonFrame>> PythonStacks::Resolve(
    int pid, const std::vector<CapturedPythonFrame>& frames) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    return NotFoundError(fmt::format("pid {}: not a CPython process being traced", pid));
  }
  std::vector<PythonFrame> out;
  for (const CapturedPythonFrame& f : frames) {
    VIGIL_ASSIGN_OR_RETURN(PythonFrame py, it->second.python->FrameAt(f.code, f.position, f.entry));
    out.push_back(std::move(py));
  }
  if (!out.empty()) out.back().entry = true;  // The outermost recorded frame starts a run.
  return out;
}

}  // namespace vigil::snoop
