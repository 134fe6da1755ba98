// SPDX-License-Identifier: Apache-2.0
#include "profile/dwarf_unwinder.h"

#include <elfutils/libdwfl.h>

#include <cstring>
#include <set>

#include <fmt/format.h>

#include "profile/proc_maps.h"
#include "profile/remote_memory.h"

namespace vigil {

struct DwarfUnwinder::Process {
  Dwfl* dwfl = nullptr;
  std::string debuginfo_path;
  char* debuginfo_path_ptr = nullptr;
  Dwfl_Callbacks callbacks{};
  RemoteMemory memory{0};
  bool attached = false;
  // The sample being unwound (set before each dwfl_getthread_frames).
  const RawSample* sample = nullptr;
  std::vector<uint64_t>* ips = nullptr;
  size_t max_frames = 0;
  bool thread_given = false;

  ~Process() {
    if (dwfl != nullptr) {
      dwfl_end(dwfl);
    }
  }
};

namespace {

using Process = DwarfUnwinder::Process;

// x86-64 DWARF register numbers 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.
constexpr int kDwarfOrder[17] = {kRegAx,  kRegDx,  kRegCx,  kRegBx,  kRegSi,  kRegDi,
                                 kRegBp,  kRegSp,  kRegR8,  kRegR9,  kRegR10, kRegR11,
                                 kRegR12, kRegR13, kRegR14, kRegR15, kRegIp};

pid_t NextThread(Dwfl* /*dwfl*/, void* arg, void** thread_arg) {
  auto* p = static_cast<Process*>(arg);
  if (p->thread_given) {
    return 0;
  }
  p->thread_given = true;
  *thread_arg = arg;
  return p->sample->tid;
}

bool GetThread(Dwfl* /*dwfl*/, pid_t tid, void* arg, void** thread_arg) {
  auto* p = static_cast<Process*>(arg);
  *thread_arg = arg;
  return tid == p->sample->tid;
}

bool MemoryRead(Dwfl* /*dwfl*/, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  auto* p = static_cast<Process*>(arg);
  const RawSample& s = *p->sample;
  const uint64_t sp = s.user_regs[kRegSp];
  if (addr >= sp && addr + sizeof(Dwarf_Word) <= sp + s.user_stack.size()) {
    std::memcpy(result, s.user_stack.data() + (addr - sp), sizeof(Dwarf_Word));
    return true;
  }
  // Above the copy: the stack has moved on since, so its contents there are not trustworthy.
  if (addr >= sp && addr < sp + (1 << 20)) {
    return false;
  }
  StatusOr<uint64_t> value = p->memory.ReadValue<uint64_t>(addr);
  if (!value.ok()) {
    return false;
  }
  *result = *value;
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* thread_arg) {
  auto* p = static_cast<Process*>(thread_arg);
  Dwarf_Word regs[17];
  for (int i = 0; i < 17; ++i) {
    regs[i] = p->sample->user_regs[static_cast<size_t>(kDwarfOrder[i])];
  }
  return dwfl_thread_state_registers(thread, 0, 17, regs);
}

int OnFrame(Dwfl_Frame* frame, void* arg) {
  auto* p = static_cast<Process*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0) {
    return DWARF_CB_ABORT;
  }
  p->ips->push_back(pc);
  return p->ips->size() >= p->max_frames ? DWARF_CB_ABORT : DWARF_CB_OK;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = NextThread,
    .get_thread = GetThread,
    .memory_read = MemoryRead,
    .set_initial_registers = SetInitialRegisters,
    .detach = nullptr,
    .thread_detach = nullptr,
};

}  // namespace

DwarfUnwinder::DwarfUnwinder(std::string proc_root, std::string debug_root)
    : proc_root_(std::move(proc_root)), debug_root_(std::move(debug_root)) {}

DwarfUnwinder::~DwarfUnwinder() = default;

void DwarfUnwinder::Forget(int pid) { processes_.erase(pid); }

DwarfUnwinder::Process* DwarfUnwinder::ProcessFor(int pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) {
    return it->second.get();
  }
  auto p = std::make_unique<Process>();
  p->memory = RemoteMemory(pid);
  // elfutils' format: "-" (no CRC check), beside the file, then the debug root's .build-id.
  p->debuginfo_path = "-:.debug:" + debug_root_;
  p->debuginfo_path_ptr = p->debuginfo_path.data();
  p->callbacks.find_elf = dwfl_linux_proc_find_elf;
  p->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
  p->callbacks.debuginfo_path = &p->debuginfo_path_ptr;
  p->dwfl = dwfl_begin(&p->callbacks);
  if (p->dwfl != nullptr) {
    StatusOr<std::vector<Mapping>> maps = ReadProcMaps(pid, proc_root_);
    if (maps.ok()) {
      dwfl_report_begin(p->dwfl);
      std::set<std::string> reported;
      for (const Mapping& m : *maps) {
        if (!m.IsFile() || !m.executable || !reported.insert(m.path).second) {
          continue;
        }
        const std::string file = MappedFilePath(pid, m.path, proc_root_);
        // perf's choice: the address where file offset 0 would be mapped.
        dwfl_report_elf(p->dwfl, m.path.c_str(), file.c_str(), -1, m.start - m.file_offset, false);
      }
      dwfl_report_end(p->dwfl, nullptr, nullptr);
      p->attached = dwfl_attach_state(p->dwfl, nullptr, pid, &kThreadCallbacks, p.get());
    }
  }
  return processes_.emplace(pid, std::move(p)).first->second.get();
}

Status DwarfUnwinder::Unwind(const RawSample& sample, std::vector<uint64_t>* ips,
                             size_t max_frames) {
  ips->clear();
  if (sample.user_regs.size() != kUserRegCount || sample.user_stack.empty()) {
    return FailedPreconditionError("sample has no user registers or stack copy");
  }
  Process* p = ProcessFor(sample.pid);
  if (p->dwfl == nullptr || !p->attached) {
    return FailedPreconditionError(fmt::format("pid {}: libdw: {}", sample.pid, dwfl_errmsg(-1)));
  }
  p->sample = &sample;
  p->ips = ips;
  p->max_frames = max_frames;
  p->thread_given = false;
  const int rc = dwfl_getthread_frames(p->dwfl, sample.tid, OnFrame, p);
  p->sample = nullptr;
  if (rc != 0 && ips->size() < 2) {
    return DataLossError(fmt::format("pid {}: unwind: {}", sample.pid, dwfl_errmsg(-1)));
  }
  return OkStatus();
}

}  // namespace vigil
