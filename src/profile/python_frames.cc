// SPDX-License-Identifier: Apache-2.0
#include "profile/python_frames.h"

#include <algorithm>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "profile/elf_data_symbol.h"
#include "profile/proc_maps.h"
#include "profile/python_line_table.h"

namespace vigil {
namespace {

constexpr int kMaxInterpreters = 64;
constexpr int kMaxThreads = 4096;
constexpr int kMaxDepth = 1024;
constexpr uint64_t kMaxStringChars = 4096;
constexpr uint64_t kMaxLineTableBytes = 1 << 20;
constexpr size_t kMaxCachedCode = 65536;
constexpr uint8_t kOwnedByCStack = 3;  // FRAME_OWNED_BY_CSTACK (3.12+).

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "python3.11", "libpython3.11.so.1.0", "python3.11d" -> {3, 11}.
std::optional<std::pair<int, int>> VersionFromName(const std::string& name) {
  static const std::regex kPattern(R"(^(?:lib)?python(\d)\.(\d+)[a-z]*(?:\.so.*)?$)");
  std::smatch m;
  if (!std::regex_match(name, m, kPattern)) {
    return std::nullopt;
  }
  return std::make_pair(std::stoi(m[1].str()), std::stoi(m[2].str()));
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace

StatusOr<std::unique_ptr<PythonProcess>> PythonProcess::Attach(int pid,
                                                               const std::string& proc_root) {
  VIGIL_ASSIGN_OR_RETURN(std::vector<Mapping> maps, ReadProcMaps(pid, proc_root));
  // libpython first (an embedding or --enable-shared build), then the python binary itself.
  for (bool want_lib : {true, false}) {
    for (const Mapping& m : maps) {
      const std::string base = Basename(m.path);
      if (!m.IsFile() || m.file_offset != 0 || (base.rfind("lib", 0) == 0) != want_lib) {
        continue;
      }
      std::optional<std::pair<int, int>> name_version = VersionFromName(base);
      if (!name_version) {
        continue;
      }
      const std::string path = MappedFilePath(pid, m.path, proc_root);
      StatusOr<ElfDataSymbol> runtime = FindElfDataSymbol(path, "_PyRuntime");
      if (!runtime.ok()) {
        continue;
      }
      VIGIL_ASSIGN_OR_RETURN(ElfLoadInfo load, ReadElfLoadInfo(path));
      const uint64_t bias = load.is_dyn ? m.start - load.first_vaddr : 0;
      RemoteMemory memory(pid);
      int major = name_version->first, minor = name_version->second;
      if (StatusOr<ElfDataSymbol> version = FindElfDataSymbol(path, "Py_Version"); version.ok()) {
        if (StatusOr<uint32_t> hex = memory.ReadValue<uint32_t>(version->value + bias); hex.ok()) {
          major = static_cast<int>((*hex >> 24) & 0xff);
          minor = static_cast<int>((*hex >> 16) & 0xff);
        }
      }
      std::optional<PythonOffsets> offsets = PythonOffsetsFor(major, minor);
      if (!offsets && (major > 3 || (major == 3 && minor >= 13))) {
        // 3.13+: the runtime describes itself.
        std::vector<uint8_t> raw(kPyDebugOffsetsSize);
        VIGIL_RETURN_IF_ERROR(memory.Read(runtime->value + bias, raw.data(), raw.size()));
        VIGIL_ASSIGN_OR_RETURN(PythonOffsets parsed, ParseDebugOffsets(raw));
        offsets = parsed;
      }
      if (!offsets) {
        return UnimplementedError(
            fmt::format("pid {}: CPython {}.{} is not supported (no offsets)", pid, major, minor));
      }
      std::unique_ptr<PythonProcess> process(new PythonProcess(pid, *offsets));
      process->module_ = base;
      process->runtime_ = runtime->value + bias;
      if (offsets->tstate_native_thread_id == 0) {
        process->FindPthreadTidOffset();
      }
      return process;
    }
  }
  return NotFoundError(fmt::format("pid {}: no CPython interpreter mapped", pid));
}

void PythonProcess::FindPthreadTidOffset() {
  // glibc 2.17-2.38 on x86-64 keep struct pthread's tid at 720; accept it only when the main
  // thread's state maps to the process id through it.
  constexpr uint64_t kGlibcTidOffset = 720;
  for (auto [interp, tstate] : ThreadStates()) {
    const uint64_t pthread = memory_.ReadPointerOr(tstate + offsets_.tstate_thread_id, 0);
    StatusOr<int32_t> tid = memory_.ReadValue<int32_t>(pthread + kGlibcTidOffset);
    if (tid.ok() && *tid == pid()) {
      pthread_tid_offset_ = kGlibcTidOffset;
      return;
    }
  }
}

std::vector<std::pair<uint64_t, uint64_t>> PythonProcess::ThreadStates() {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t interp = memory_.ReadPointerOr(runtime_ + offsets_.runtime_interpreters_head, 0);
  for (int i = 0; interp != 0 && i < kMaxInterpreters; ++i) {
    uint64_t tstate = memory_.ReadPointerOr(interp + offsets_.interp_threads_head, 0);
    for (int t = 0; tstate != 0 && t < kMaxThreads; ++t) {
      out.emplace_back(interp, tstate);
      tstate = memory_.ReadPointerOr(tstate + offsets_.tstate_next, 0);
    }
    interp = memory_.ReadPointerOr(interp + offsets_.interp_next, 0);
  }
  return out;
}

uint64_t PythonProcess::GilHolder(uint64_t interp) {
  uint64_t base = 0;
  switch (offsets_.gil_at) {
    case GilAt::kRuntime:
      base = runtime_;
      break;
    case GilAt::kInterpreterPointer:
      base = memory_.ReadPointerOr(interp + offsets_.gil_pointer, 0);
      break;
    case GilAt::kInterpreter:
      base = interp;
      break;
  }
  if (base == 0) {
    return 0;
  }
  StatusOr<int32_t> locked = memory_.ReadValue<int32_t>(base + offsets_.gil_locked);
  if (!locked.ok() || *locked == 0) {
    return 0;
  }
  return memory_.ReadPointerOr(base + offsets_.gil_last_holder, 0);
}

StatusOr<std::vector<PythonThread>> PythonProcess::ReadThreads() {
  std::vector<PythonThread> out;
  for (auto [interp, tstate] : ThreadStates()) {
    PythonThread thread;
    thread.native_tid = NativeTid(tstate);
    thread.holds_gil = tstate == GilHolder(interp);
    VIGIL_RETURN_IF_ERROR(ReadFrames(tstate, &thread.frames));
    out.push_back(std::move(thread));
  }
  return out;
}

StatusOr<PythonThread> PythonProcess::ReadThread(int tid) {
  for (auto [interp, tstate] : ThreadStates()) {
    if (NativeTid(tstate) != tid) {
      continue;
    }
    PythonThread thread;
    thread.native_tid = tid;
    thread.holds_gil = tstate == GilHolder(interp);
    VIGIL_RETURN_IF_ERROR(ReadFrames(tstate, &thread.frames));
    return thread;
  }
  return NotFoundError(fmt::format("pid {}: no Python thread state for tid {}", pid(), tid));
}

int PythonProcess::NativeTid(uint64_t tstate) {
  if (offsets_.tstate_native_thread_id != 0) {
    return static_cast<int>(memory_.ReadPointerOr(tstate + offsets_.tstate_native_thread_id, 0));
  }
  // Before 3.11 a thread state knows only its pthread_t, the address of glibc's struct pthread,
  // whose `tid` member sits at a fixed offset (checked at attach on the main thread).
  if (pthread_tid_offset_ == 0) {
    return 0;
  }
  const uint64_t pthread = memory_.ReadPointerOr(tstate + offsets_.tstate_thread_id, 0);
  StatusOr<int32_t> tid = memory_.ReadValue<int32_t>(pthread + pthread_tid_offset_);
  return tid.ok() ? *tid : 0;
}

int PythonProcess::LineOf(const CodeInfo& code, uint64_t position) const {
  switch (offsets_.line_table) {
    case LineTableFormat::kLocations:
      return PythonLineOfCodeUnit(code.linetable, code.first_line, static_cast<int>(position));
    case LineTableFormat::kLineTable310:
      return PythonLineOf310Table(code.linetable, code.first_line, static_cast<int>(position));
    case LineTableFormat::kLnotab:
      return PythonLineOfLnotab(code.linetable, code.first_line, static_cast<int>(position));
  }
  return code.first_line;
}

Status PythonProcess::ReadFrameObjects(uint64_t tstate, std::vector<PythonFrame>* out) {
  uint64_t frame = memory_.ReadPointerOr(tstate + offsets_.tstate_frame, 0);
  for (int depth = 0; frame != 0; ++depth) {
    if (depth == kMaxDepth) {
      return DataLossError(fmt::format("pid {}: Python stack deeper than {}", pid(), kMaxDepth));
    }
    const uint64_t code = memory_.ReadPointerOr(frame + offsets_.frame_code, 0);
    VIGIL_ASSIGN_OR_RETURN(int32_t lasti, memory_.ReadValue<int32_t>(frame + offsets_.frame_lasti));
    // One eval-loop call per frame object: each is an entry.
    VIGIL_ASSIGN_OR_RETURN(PythonFrame py,
                           FrameAt(code, static_cast<uint64_t>(static_cast<int64_t>(lasti)), true));
    out->push_back(std::move(py));
    frame = memory_.ReadPointerOr(frame + offsets_.frame_previous, 0);
  }
  return OkStatus();
}

Status PythonProcess::ReadFrames(uint64_t tstate, std::vector<PythonFrame>* out) {
  out->clear();
  if (offsets_.frame_model == FrameModel::kFrameObject) {
    return ReadFrameObjects(tstate, out);
  }
  uint64_t frame = 0;
  if (offsets_.tstate_cframe != 0) {
    const uint64_t cframe = memory_.ReadPointerOr(tstate + offsets_.tstate_cframe, 0);
    if (cframe == 0) {
      return OkStatus();
    }
    frame = memory_.ReadPointerOr(cframe + offsets_.cframe_current_frame, 0);
  } else {
    frame = memory_.ReadPointerOr(tstate + offsets_.tstate_current_frame, 0);
  }
  for (int depth = 0; frame != 0; ++depth) {
    if (depth == kMaxDepth) {
      return DataLossError(fmt::format("pid {}: Python stack deeper than {}", pid(), kMaxDepth));
    }
    // The frame's fields up to `owner`, in one read.
    uint8_t raw[128] = {};
    const size_t size =
        std::max({offsets_.frame_owner + 1, offsets_.frame_code + 8, offsets_.frame_previous + 8,
                  offsets_.frame_prev_instr + 8, offsets_.frame_is_entry + 1});
    if (size > sizeof(raw)) {
      return InternalError("python frame offsets beyond 128 bytes");
    }
    VIGIL_RETURN_IF_ERROR(memory_.Read(frame, raw, size));
    uint64_t code = 0, previous = 0, prev_instr = 0;
    std::memcpy(&code, raw + offsets_.frame_code, 8);
    std::memcpy(&previous, raw + offsets_.frame_previous, 8);
    std::memcpy(&prev_instr, raw + offsets_.frame_prev_instr, 8);
    if (offsets_.entry_mark == EntryMark::kShimFrame &&
        raw[offsets_.frame_owner] == kOwnedByCStack) {
      // The shim an eval-loop call pushes below its first frame: that frame starts a run.
      if (!out->empty()) {
        out->back().entry = true;
      }
      frame = previous;
      continue;
    }
    const bool entry =
        offsets_.entry_mark == EntryMark::kIsEntryFlag && raw[offsets_.frame_is_entry] != 0;
    VIGIL_ASSIGN_OR_RETURN(PythonFrame py, FrameAt(code, prev_instr, entry));
    out->push_back(std::move(py));
    frame = previous;
  }
  if (!out->empty()) {
    out->back().entry = true;  // The outermost frame always starts a run.
  }
  return OkStatus();
}

std::vector<std::pair<int, uint64_t>> PythonProcess::ThreadStatesByTid() {
  std::vector<std::pair<int, uint64_t>> out;
  for (auto [interp, tstate] : ThreadStates()) {
    out.emplace_back(NativeTid(tstate), tstate);
  }
  return out;
}

StatusOr<PythonFrame> PythonProcess::FrameAt(uint64_t code, uint64_t position, bool entry) {
  VIGIL_ASSIGN_OR_RETURN(const CodeInfo* info, Code(code));
  uint64_t index = 0;  // Code unit (3.11+) or bytecode byte offset (before), per LineOf.
  if (offsets_.frame_model == FrameModel::kFrameObject) {
    const int64_t lasti = std::max<int64_t>(static_cast<int32_t>(position), 0);
    index = static_cast<uint64_t>(lasti) * (offsets_.lasti_in_code_units ? 2 : 1);
  } else {
    const uint64_t first_unit = code + offsets_.code_code_adaptive;
    index = position >= first_unit ? (position - first_unit) / 2 : 0;
  }
  PythonFrame py;
  py.function = info->name;
  py.file = info->file;
  py.line = LineOf(*info, index);
  py.entry = entry;
  return py;
}

StatusOr<const PythonProcess::CodeInfo*> PythonProcess::Code(uint64_t address) {
  auto it = code_cache_.find(address);
  if (it != code_cache_.end()) {
    return &it->second;
  }
  CodeInfo info;
  const uint64_t name_field =
      offsets_.code_qualname != 0 ? offsets_.code_qualname : offsets_.code_name;
  VIGIL_ASSIGN_OR_RETURN(info.name, ReadString(memory_.ReadPointerOr(address + name_field, 0)));
  VIGIL_ASSIGN_OR_RETURN(info.file,
                         ReadString(memory_.ReadPointerOr(address + offsets_.code_filename, 0)));
  VIGIL_ASSIGN_OR_RETURN(int32_t first_line,
                         memory_.ReadValue<int32_t>(address + offsets_.code_firstlineno));
  info.first_line = first_line;
  VIGIL_ASSIGN_OR_RETURN(info.linetable,
                         ReadBytes(memory_.ReadPointerOr(address + offsets_.code_linetable, 0)));
  if (code_cache_.size() >= kMaxCachedCode) {
    code_cache_.clear();
  }
  return &code_cache_.emplace(address, std::move(info)).first->second;
}

StatusOr<std::string> PythonProcess::ReadString(uint64_t address) {
  if (address == 0) {
    return DataLossError("null string object");
  }
  VIGIL_ASSIGN_OR_RETURN(uint64_t length,
                         memory_.ReadValue<uint64_t>(address + offsets_.unicode_length));
  VIGIL_ASSIGN_OR_RETURN(uint32_t state,
                         memory_.ReadValue<uint32_t>(address + offsets_.unicode_state));
  const uint32_t kind = (state >> 2) & 7;
  const bool compact = ((state >> 5) & 1) != 0;
  const bool ascii = ((state >> 6) & 1) != 0;
  if (!compact || (kind != 1 && kind != 2 && kind != 4) || length > kMaxStringChars) {
    return DataLossError(fmt::format("string object at {:#x} is not a compact string", address));
  }
  const uint64_t data =
      address + (ascii ? offsets_.unicode_ascii_data : offsets_.unicode_compact_data);
  std::string raw(length * kind, '\0');
  VIGIL_RETURN_IF_ERROR(memory_.Read(data, raw.data(), raw.size()));
  if (ascii) {
    return raw;
  }
  std::string out;
  for (uint64_t i = 0; i < length; ++i) {
    uint32_t cp = 0;
    std::memcpy(&cp, raw.data() + i * kind, kind);  // Little-endian x86-64.
    AppendUtf8(cp, &out);
  }
  return out;
}

StatusOr<std::string> PythonProcess::ReadBytes(uint64_t address) {
  if (address == 0) {
    return DataLossError("null bytes object");
  }
  VIGIL_ASSIGN_OR_RETURN(uint64_t size, memory_.ReadValue<uint64_t>(address + offsets_.bytes_size));
  if (size > kMaxLineTableBytes) {
    return DataLossError(fmt::format("bytes object at {:#x} too large", address));
  }
  std::string out(size, '\0');
  VIGIL_RETURN_IF_ERROR(memory_.Read(address + offsets_.bytes_data, out.data(), size));
  return out;
}

}  // namespace vigil
