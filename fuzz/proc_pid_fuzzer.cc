// SPDX-License-Identifier: Apache-2.0
// Fuzzes the parsers of per-process /proc files, whose contents a process partly controls (its
// comm, argv and environment): attribution/proc_pid_files.h (stat, status, environ, cmdline),
// used by the job resolver and the process collector, and the NSpid/PPid reader of the IPC
// registry's claim check (ipc/process_registry.h). Each input is read as every one of them.
// Invariants: a parsed stat line's numbers are the kernel's (pid > 0 when parsed), environ keeps
// only allow-listed keys, and a cmdline never grows.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/proc_pid_files.h"
#include "fuzz/fuzz_input.h"
#include "ipc/process_registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string copy(reinterpret_cast<const char*>(data), size);
  const std::string_view text = copy;

  if (auto stat = vigil::ParseProcStat(text)) {
    VIGIL_FUZZ_CHECK(stat->comm.size() <= text.size());
  }
  [[maybe_unused]] vigil::ProcStatus status = vigil::ParseProcStatus(text);

  static const std::vector<std::string> kAllow = {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                                                  "VIGIL_TEAM", "VIGIL_MODEL", "USER"};
  for (const auto& [key, value] : vigil::ParseEnviron(text, kAllow)) {
    bool allowed = false;
    for (const std::string& k : kAllow) {
      allowed = allowed || k == key;
    }
    VIGIL_FUZZ_CHECK(allowed);
    VIGIL_FUZZ_CHECK(key.size() + value.size() < text.size());
  }
  VIGIL_FUZZ_CHECK(vigil::CmdlineToString(text).size() <= text.size());

  if (auto ids = vigil::ParseProcStatusIds(text); ids.ok()) {
    VIGIL_FUZZ_CHECK(ids->ns_pids.size() <= text.size());
  }
  return 0;
}
