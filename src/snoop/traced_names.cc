// SPDX-License-Identifier: Apache-2.0
#include "snoop/traced_names.h"

#include <sys/stat.h>

#include <cstdio>
#include <optional>

#include "profile/python_merge.h"
#include "snoop/cuda_api_table.h"
#include "snoop/map_reader.h"

namespace vigil::snoop {
namespace {

std::string HexName(uint64_t v) {
  char buf[40];
  snprintf(buf, sizeof(buf), "[unknown 0x%llx]", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

TracedNames::TracedNames(std::string proc_root, int func_names_fd, int stacks_fd,
                         PythonStacks* python)
    : symbolizer_(SymbolizerOptions{.proc_root = std::move(proc_root)}),
      func_names_fd_(func_names_fd),
      stacks_fd_(stacks_fd),
      python_(python) {}

void TracedNames::SetMaps(int pid, std::vector<Mapping> maps) { maps_[pid] = std::move(maps); }

void TracedNames::Prime(int pid) {
  exited_.erase(pid);
  symbolizer_.MapsOf(pid);
}

void TracedNames::MarkExited(int pid) {
  exited_.insert(pid);
  std::erase_if(
      retry_, [&](const auto& kv) { return std::get<0>(kv.first) == static_cast<uint32_t>(pid); });
  symbolizer_.Forget(pid);
}

std::string TracedNames::KernelName(uint32_t pid, uint32_t api, uint64_t func) {
  auto apis = CudaApis();
  bool driver = api < apis.size() && apis[api].provider == CudaLibrary::kDriver;
  auto key = std::make_tuple(pid, driver, func);
  auto it = kernel_names_.find(key);
  if (it != kernel_names_.end()) return it->second;
  auto now = std::chrono::steady_clock::now();
  auto retry = retry_.find(key);
  if (retry != retry_.end() && now < retry->second) return HexName(func);
  std::string name;
  if (driver) {
    std::optional<std::string> n = ReadFuncName(func_names_fd_, pid, func);
    if (n) name = Demangle(*n);
  } else {
    Frame f = symbolizer_.Symbolize(static_cast<int>(pid), func);
    if (!f.known()) f = FallbackFrame(pid, func);
    if (f.known()) name = f.function;
  }
  if (name.empty()) {  // The name may be learnt later (a library read later): retried.
    retry_[key] = now + std::chrono::seconds(2);
    return HexName(func);
  }
  retry_.erase(key);
  kernel_names_.emplace(key, name);
  return name;
}

CallStack TracedNames::Stack(uint32_t pid, int64_t stack_id) {
  auto key = std::make_pair(pid, stack_id);
  auto it = stacks_.find(key);
  if (it != stacks_.end()) return it->second;
  CallStack stack;
  StackRecord record = ReadStack(stacks_fd_, stack_id);
  if (record.ips.empty()) return stack;
  bool complete = true;
  std::vector<ProfileFrame> frames;
  for (Frame f : symbolizer_.SymbolizeStack(static_cast<int>(pid), record.ips)) {
    if (!f.known()) f = FallbackFrame(pid, f.address);
    complete &= f.known();
    ProfileFrame native;
    native.function = f.function;
    native.module = f.module;
    frames.push_back(std::move(native));
  }
  if (!record.python.empty() && python_) {
    StatusOr<std::vector<PythonFrame>> py = python_->Resolve(static_cast<int>(pid), record.python);
    if (py.ok()) {
      frames = MergePythonFrames(frames, *py, python_->Module(static_cast<int>(pid)));
    } else {
      complete = false;
    }
  }
  for (const ProfileFrame& f : frames) {
    stack.frames.push_back(f.kind == FrameKind::kPython ? FrameLabel(f)
                                                        : f.function + " (" + f.module + ")");
  }
  if (record.python_truncated) stack.frames.push_back("[outer Python frames not recorded]");
  if (!complete && !exited_.count(static_cast<int>(pid)))
    return stack;  // Retried later (a library not read yet).
  stacks_.emplace(key, stack);
  return stack;
}

// Names `address` from the maps saved for `pid` and the mapped file opened by its own path:
// what still works once the process is gone (its /proc entry no longer opens the files) or
// when the symboliser's view of it is stale. The file must still have the mapped inode.
Frame TracedNames::FallbackFrame(uint32_t pid, uint64_t address) {
  Frame frame;
  frame.function = "[unknown]";
  frame.address = address;
  auto it = maps_.find(static_cast<int>(pid));
  if (it == maps_.end()) return frame;
  const Mapping* m = FindMapping(it->second, address);
  if (!m || !m->IsFile()) return frame;
  frame.module = m->path.substr(m->path.rfind('/') + 1);
  auto key = std::make_pair(m->device, m->inode);
  auto img = images_.find(key);
  if (img == images_.end()) {
    std::unique_ptr<ElfImage> image;
    struct stat st;
    if (stat(m->path.c_str(), &st) == 0 && st.st_ino == m->inode) {
      StatusOr<ElfImage> loaded = ElfImage::Load(m->path);
      if (loaded.ok()) image = std::make_unique<ElfImage>(std::move(*loaded));
    }
    img = images_.emplace(key, std::move(image)).first;
  }
  if (!img->second) return frame;
  std::optional<uint64_t> vaddr = img->second->AddressOfFileOffset(m->FileOffsetOf(address));
  const ElfSymbol* sym = vaddr ? img->second->SymbolAt(*vaddr) : nullptr;
  if (!sym) return frame;
  frame.function = Demangle(sym->name);
  frame.offset = *vaddr - sym->address;
  return frame;
}

}  // namespace vigil::snoop
