// SPDX-License-Identifier: Apache-2.0
// Attaches the CUDA probes to library files: every row of the API table whose symbol the file
// defines gets an entry uprobe (and a uretprobe where the call is finished on return), with
// the row index as the BPF cookie. Uprobes are on the file (its inode), for every process; the
// BPF pid filter decides who is traced, so each file is probed once however many processes map
// it. Where the kernel has multi-uprobe links (Linux 6.6+), all of a file's entry probes are
// one link and its return probes another: one detach each, where a link per probe costs the
// kernel a grace period per probe to take down (tens of milliseconds each). Older kernels get
// a perf-event link per probe (the session loads the programs for one or the other). Owns the
// links: destroying the attacher detaches everything.
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
  // `multi_links`: the programs were loaded for multi-uprobe links (kUprobeMultiAttachType);
  // otherwise each probe gets its own perf-event link.
  ProbeAttacher(bpf_program* entry, bpf_program* ret, bool multi_links)
      : entry_(entry), ret_(ret), multi_(multi_links) {}
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

  int probes() const;  // Uprobes and uretprobes attached (all files).
  void DetachAll();

  // The attach type the entry and return programs must be loaded with so multi-uprobe links
  // can be made (BPF_TRACE_UPROBE_MULTI, Linux 6.6+).
  static constexpr int kUprobeMultiAttachType = 48;

 private:
  struct FileProbes {
    std::vector<bpf_link*> links;  // Per-probe perf-event links (older kernels).
    std::vector<int> multi_fds;    // Multi-uprobe link fds.
    int probes = 0;
  };
  bpf_program* entry_;
  bpf_program* ret_;
  bool multi_;
  std::map<std::pair<std::string, uint64_t>, FileProbes> files_;
  std::map<int, bpf_link*> extra_;
  int next_extra_ = 1;
};

// Where a file's probes go: an entry probe per traced symbol the file defines for its library
// (aliases once), at the function's probe site (probe_site.h), its cookie the API's row index;
// and a return probe for each call finished on return. NotFound when it defines none.
struct ProbePlan {
  std::vector<uint64_t> entry_offsets, entry_cookies;
  std::vector<uint64_t> ret_offsets, ret_cookies;
};
StatusOr<ProbePlan> PlanProbes(const CudaLibraryFile& file);

// One multi-uprobe link of `prog` on `path` at `offsets` with `cookies`; the link's fd.
StatusOr<int> AttachUprobeMulti(bpf_program* prog, bool retprobe, const std::string& path,
                                const std::vector<uint64_t>& offsets,
                                const std::vector<uint64_t>& cookies);

// Attaches one uprobe; errno-based Status on failure.
StatusOr<bpf_link*> AttachUprobe(bpf_program* prog, bool retprobe, const std::string& path,
                                 uint64_t file_offset, uint64_t cookie);

}  // namespace vigil::snoop
