// SPDX-License-Identifier: Apache-2.0
// Attaches the CUDA probes to library files: every row of the API table whose symbol the file
// defines gets an entry uprobe (and a uretprobe where the call is finished on return), with
// the row index as the BPF cookie. Uprobes are on the file (its inode), for every process; the
// BPF pid filter decides who is traced, so each file is probed once however many processes map
// it. Owns the links: destroying the attacher detaches everything.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "snoop/cuda_library_finder.h"

struct bpf_program;
struct bpf_link;

namespace vigil::snoop {

class ProbeAttacher {
 public:
  ProbeAttacher(bpf_program* entry, bpf_program* ret) : entry_(entry), ret_(ret) {}
  ~ProbeAttacher();
  ProbeAttacher(const ProbeAttacher&) = delete;
  ProbeAttacher& operator=(const ProbeAttacher&) = delete;

  // Probes `file` unless already probed (same device and inode). Returns the probes attached
  // now (0 when the file was probed before). NotFound when the file defines none of the
  // table's symbols for its library; an attach failure detaches what this call attached.
  StatusOr<int> Attach(const CudaLibraryFile& file);
  // Attaches `prog` at `file_offset` of `path` (the entry-point stop). The link is owned and
  // detached by DetachExtra or the destructor.
  StatusOr<int> AttachExtra(bpf_program* prog, const std::string& path, uint64_t file_offset);
  void DetachExtra(int handle);

  int links() const;
  void DetachAll();

 private:
  bpf_program* entry_;
  bpf_program* ret_;
  std::map<std::pair<std::string, uint64_t>, std::vector<bpf_link*>> files_;
  std::map<int, bpf_link*> extra_;
  int next_extra_ = 1;
};

// Attaches one uprobe; errno-based Status on failure.
StatusOr<bpf_link*> AttachUprobe(bpf_program* prog, bool retprobe, const std::string& path,
                                 uint64_t file_offset, uint64_t cookie);

}  // namespace vigil::snoop
