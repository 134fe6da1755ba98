// SPDX-License-Identifier: Apache-2.0
// The Python stacks of a running CPython, read from outside as py-spy does: find _PyRuntime by
// its ELF symbol in the interpreter binary or libpython the process maps, then walk
// interpreters -> thread states -> frames (_PyInterpreterFrame from 3.11: f_code, previous,
// prev_instr; PyFrameObject f_back chains before 3.11) with process_vm_readv, and turn each code
// object into name, file and line (its line table). Field offsets come from PythonOffsetsFor
// (3.9-3.12) or the runtime's own _Py_DebugOffsets (3.13); the version is the interpreter's
// Py_Version, else the file name. The target is not stopped, so a thread's frames are re-validated
// (bounded depth, readable pointers) and a torn read drops that sample's Python frames rather than
// inventing any. One per process; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "profile/python_merge.h"
#include "profile/python_offsets.h"
#include "profile/remote_memory.h"

namespace vigil {

struct PythonThread {
  int native_tid = 0;
  bool holds_gil = false;           // This thread state is the GIL's holder now.
  std::vector<PythonFrame> frames;  // Leaf first; empty for an idle thread.
};

class PythonProcess {
 public:
  // NotFound when `pid` maps no CPython; Unimplemented for a version without offsets.
  static StatusOr<std::unique_ptr<PythonProcess>> Attach(int pid,
                                                         const std::string& proc_root = "/proc");

  int pid() const { return memory_.pid(); }
  int major() const { return offsets_.major; }
  int minor() const { return offsets_.minor; }
  // Basename of the file holding the interpreter ("python3.11", "libpython3.11.so.1.0").
  const std::string& module() const { return module_; }
  uint64_t runtime_address() const { return runtime_; }

  // Every thread state of every interpreter.
  StatusOr<std::vector<PythonThread>> ReadThreads();
  // The thread state whose native thread id is `tid`; NotFound when it has none.
  StatusOr<PythonThread> ReadThread(int tid);

  // For readers that capture frames elsewhere (snoop's BPF program reads the chain at a call):
  // the layout, each thread state by native thread id (0 when unknown), and one captured frame
  // resolved. `position` is the frame's instruction pointer (prev_instr, instr_ptr) for
  // _PyInterpreterFrame, f_lasti for PyFrameObject.
  const PythonOffsets& offsets() const { return offsets_; }
  std::vector<std::pair<int, uint64_t>> ThreadStatesByTid();
  StatusOr<PythonFrame> FrameAt(uint64_t code, uint64_t position, bool entry);

 private:
  struct CodeInfo {
    std::string name;
    std::string file;
    int first_line = 0;
    std::string linetable;
  };
  PythonProcess(int pid, PythonOffsets offsets) : memory_(pid), offsets_(offsets) {}
  Status ReadFrames(uint64_t tstate, std::vector<PythonFrame>* out);
  Status ReadFrameObjects(uint64_t tstate, std::vector<PythonFrame>* out);
  int NativeTid(uint64_t tstate);
  void FindPthreadTidOffset();
  StatusOr<const CodeInfo*> Code(uint64_t address);
  StatusOr<std::string> ReadString(uint64_t address);
  StatusOr<std::string> ReadBytes(uint64_t address);
  std::vector<std::pair<uint64_t, uint64_t>> ThreadStates();  // (interpreter, thread state)
  uint64_t GilHolder(uint64_t interp);

  RemoteMemory memory_;
  PythonOffsets offsets_;
  std::string module_;
  uint64_t runtime_ = 0;
  int LineOf(const CodeInfo& code, uint64_t position) const;
  std::map<uint64_t, CodeInfo> code_cache_;  // By code object address.
  uint64_t pthread_tid_offset_ = 0;          // Before 3.11: tid inside struct pthread.
};

}  // namespace vigil
