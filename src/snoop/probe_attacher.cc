// SPDX-License-Identifier: Apache-2.0
#include "snoop/probe_attacher.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <set>

#include "profile/elf_image.h"
#include "snoop/cuda_api_table.h"

namespace vigil::snoop {
namespace {

bool FinishedOnReturn(int klass) {
  return klass == VS_CLASS_SYNC || klass == VS_CLASS_ALLOC || klass == VS_CLASS_FUNC_NAME;
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

ProbeAttacher::~ProbeAttacher() { DetachAll(); }

StatusOr<int> ProbeAttacher::Attach(const CudaLibraryFile& file) {
  auto key = std::make_pair(file.device, file.inode);
  if (files_.count(key)) return 0;
  StatusOr<ElfImage> image = ElfImage::Load(file.open_path, /*look_for_debug_file=*/false);
  if (!image.ok()) return image.status().WithContext("probing " + file.path);
  std::vector<bpf_link*> links;
  std::set<uint64_t> offsets;  // Aliased symbols (one function, two names) probed once.
  auto fail = [&](const Status& s) {
    for (bpf_link* l : links) bpf_link__destroy(l);
    return s;
  };
  const auto apis = CudaApis();
  for (size_t i = 0; i < apis.size(); ++i) {
    const CudaApi& api = apis[i];
    if (api.library != file.library) continue;
    std::optional<ElfSymbol> sym = image->FindSymbol(api.symbol);
    if (!sym || sym->address == 0) continue;
    std::optional<uint64_t> offset = image->FileOffsetOfAddress(sym->address);
    if (!offset || !offsets.insert(*offset).second) continue;
    StatusOr<bpf_link*> entry = AttachUprobe(entry_, false, file.open_path, *offset, i);
    if (!entry.ok()) return fail(entry.status().WithContext(std::string(api.symbol)));
    links.push_back(*entry);
    if (FinishedOnReturn(api.spec.klass)) {
      StatusOr<bpf_link*> ret = AttachUprobe(ret_, true, file.open_path, *offset, i);
      if (!ret.ok()) return fail(ret.status().WithContext(std::string(api.symbol)));
      links.push_back(*ret);
    }
  }
  if (links.empty()) {
    return NotFoundError(file.path + " defines none of the traced CUDA entry points");
  }
  int n = static_cast<int>(links.size());
  files_[key] = std::move(links);
  return n;
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

int ProbeAttacher::links() const {
  size_t n = extra_.size();
  for (const auto& [key, links] : files_) n += links.size();
  return static_cast<int>(n);
}

void ProbeAttacher::DetachAll() {
  for (auto& [key, links] : files_) {
    for (bpf_link* l : links) bpf_link__destroy(l);
  }
  files_.clear();
  for (auto& [handle, link] : extra_) bpf_link__destroy(link);
  extra_.clear();
}

}  // namespace vigil::snoop
