// SPDX-License-Identifier: Apache-2.0
#include "snoop/probe_attacher.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <bpf/libbpf.h>

#include "base/file_util.h"
#include "profile/elf_image.h"
#include "snoop/cuda_api_table.h"
#include "snoop/probe_site.h"

namespace vigil::snoop {
namespace {

bool FinishedOnReturn(int klass) {
  return klass == VS_CLASS_SYNC || klass == VS_CLASS_ALLOC || klass == VS_CLASS_FUNC_NAME ||
         klass == VS_CLASS_SET_DEVICE || klass == VS_CLASS_CTX_NEW;
}

}  // namespace

StatusOr<bpf_link*> AttachUprobe(bpf_program* prog, bool retprobe, const std::string& path,
                                 uint64_t file_offset, uint64_t cookie) {
  LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = retprobe);
  bpf_link* link = bpf_program__attach_uprobe_opts(prog, /*pid=*/-1, path.c_str(),
                                                   static_cast<size_t>(file_offset), &opts);
  if (link == nullptr) {
    int err = errno;
    return ErrnoStatus(err, "attaching a uprobe to " + path);
  }
  return link;
}

StatusOr<int> AttachUprobeMulti(bpf_program* prog, bool retprobe, const std::string& path,
                                const std::vector<uint64_t>& offsets,
                                const std::vector<uint64_t>& cookies) {
  // union bpf_attr's link_create as Linux 6.6 defines it for uprobe_multi; Debian 12's
  // headers predate it, so the layout is spelled out here.
  struct {
    uint32_t prog_fd;
    uint32_t target_fd;
    uint32_t attach_type;
    uint32_t flags;
    uint64_t path;
    uint64_t offsets;
    uint64_t ref_ctr_offsets;
    uint64_t cookies;
    uint32_t cnt;
    uint32_t multi_flags;  // BPF_F_UPROBE_MULTI_RETURN = 1
    uint32_t pid;
    uint8_t rest[64];  // The rest of union bpf_attr: zero.
  } attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.prog_fd = static_cast<uint32_t>(bpf_program__fd(prog));
  attr.attach_type = ProbeAttacher::kUprobeMultiAttachType;
  attr.path = reinterpret_cast<uintptr_t>(path.c_str());
  attr.offsets = reinterpret_cast<uintptr_t>(offsets.data());
  attr.cookies = reinterpret_cast<uintptr_t>(cookies.data());
  attr.cnt = static_cast<uint32_t>(offsets.size());
  attr.multi_flags = retprobe ? 1 : 0;
  constexpr int kBpfLinkCreate = 28;  // BPF_LINK_CREATE
  long fd = syscall(SYS_bpf, kBpfLinkCreate, &attr, sizeof(attr));
  if (fd < 0) {
    int err = errno;
    return ErrnoStatus(err, "attaching uprobes to " + path);
  }
  return static_cast<int>(fd);
}

ProbeAttacher::~ProbeAttacher() { DetachAll(); }

StatusOr<ProbePlan> PlanProbes(const CudaLibraryFile& file) {
  StatusOr<ElfImage> image = ElfImage::Load(file.open_path, /*look_for_debug_file=*/false);
  if (!image.ok()) return image.status().WithContext("probing " + file.path);
  // To look at the functions' first instructions.
  ScopedFd code(open(file.open_path.c_str(), O_RDONLY | O_CLOEXEC));
  ProbePlan plan;
  std::set<uint64_t> offsets;  // Aliased symbols (one function, two names) are probed once.
  const auto apis = CudaApis();
  for (size_t i = 0; i < apis.size(); ++i) {
    const CudaApi& api = apis[i];
    if (api.provider != file.provider) continue;
    std::optional<ElfSymbol> sym = image->FindSymbol(api.symbol);
    if (!sym || sym->address == 0) continue;
    std::optional<uint64_t> offset = image->FileOffsetOfAddress(sym->address);
    if (offset && code.valid()) offset = ProbeSiteOffset(code.get(), *offset);
    if (!offset || !offsets.insert(*offset).second) continue;
    plan.entry_offsets.push_back(*offset);
    plan.entry_cookies.push_back(i);
    if (FinishedOnReturn(api.spec.klass)) {
      plan.ret_offsets.push_back(*offset);
      plan.ret_cookies.push_back(i);
    }
  }
  if (plan.entry_offsets.empty()) {
    return NotFoundError(file.path + " defines none of the traced CUDA entry points");
  }
  return plan;
}

StatusOr<int> ProbeAttacher::Attach(const CudaLibraryFile& file) {
  auto key = std::make_pair(file.device, file.inode);
  if (files_.count(key)) return 0;
  StatusOr<ProbePlan> plan = PlanProbes(file);
  if (!plan.ok()) return plan.status();
  const auto& [entry_offsets, entry_cookies, ret_offsets, ret_cookies] = *plan;
  const auto apis = CudaApis();
  FileProbes probes;
  probes.probes = static_cast<int>(entry_offsets.size() + ret_offsets.size());
  auto fail = [&](const Status& s) {
    for (bpf_link* l : probes.links) bpf_link__destroy(l);
    for (int fd : probes.multi_fds) close(fd);
    return s;
  };
  if (multi_) {
    StatusOr<int> e =
        AttachUprobeMulti(entry_, false, file.open_path, entry_offsets, entry_cookies);
    if (e.ok()) {
      probes.multi_fds.push_back(*e);
      if (!ret_offsets.empty()) {
        StatusOr<int> r = AttachUprobeMulti(ret_, true, file.open_path, ret_offsets, ret_cookies);
        if (!r.ok()) return fail(r.status());
        probes.multi_fds.push_back(*r);
      }
      files_[key] = std::move(probes);
      return files_[key].probes;
    }
    return e.status();  // The programs were loaded for multi links; no other way then.
  }
  for (size_t i = 0; i < entry_offsets.size(); ++i) {
    StatusOr<bpf_link*> l =
        AttachUprobe(entry_, false, file.open_path, entry_offsets[i], entry_cookies[i]);
    if (!l.ok()) return fail(l.status().WithContext(std::string(apis[entry_cookies[i]].symbol)));
    probes.links.push_back(*l);
  }
  for (size_t i = 0; i < ret_offsets.size(); ++i) {
    StatusOr<bpf_link*> l =
        AttachUprobe(ret_, true, file.open_path, ret_offsets[i], ret_cookies[i]);
    if (!l.ok()) return fail(l.status().WithContext(std::string(apis[ret_cookies[i]].symbol)));
    probes.links.push_back(*l);
  }
  files_[key] = std::move(probes);
  return files_[key].probes;
}

StatusOr<int> ProbeAttacher::AttachExtra(bpf_program* prog, const std::string& path,
                                         uint64_t file_offset) {
  StatusOr<bpf_link*> link = AttachUprobe(prog, false, path, file_offset, 0);
  if (!link.ok()) return link.status();
  int handle = next_extra_++;
  extra_[handle] = *link;
  return handle;
}

void ProbeAttacher::DetachExtra(int handle) {
  auto it = extra_.find(handle);
  if (it == extra_.end()) return;
  bpf_link__destroy(it->second);
  extra_.erase(it);
}

int ProbeAttacher::probes() const {
  int n = static_cast<int>(extra_.size());
  for (const auto& [key, p] : files_) n += p.probes;
  return n;
}

void ProbeAttacher::DetachAll() {
  for (auto& [key, p] : files_) {
    for (bpf_link* l : p.links) bpf_link__destroy(l);
    for (int fd : p.multi_fds) close(fd);
  }
  files_.clear();
  for (auto& [handle, link] : extra_) bpf_link__destroy(link);
  extra_.clear();
}

}  // namespace vigil::snoop
