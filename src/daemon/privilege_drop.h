// SPDX-License-Identifier: Apache-2.0
// Drops what vigild does not need, once, from main() before the daemon starts any thread: in
// Linux, capabilities, the keep-caps flag and the bounding set belong to each thread, and glibc
// broadcasts only the set*id calls, so a drop with threads running would leave those threads
// privileged. Raw prctl/capset rather than libcap or libcap-ng: the sequence is short, its order
// matters (bounding set while still root, keep-caps, groups, gid, uid, capset, verify) and must
// be visible in one place, and a daemon installed on every GPU host gains no runtime dependency.
//
// Started as root with --user NAME: the directories the daemon writes (unix socket directory,
// state directory, trace root, JSON-lines directory) are created for that user first, then the
// process switches to it keeping only PlanPrivileges()'s set. As root without --user it keeps
// uid 0 with that set. Not root: it lowers what it was given (e.g. systemd AmbientCapabilities=)
// to that set. In every case no_new_privs is set and the ambient set is cleared.
#pragma once

#include <sys/types.h>

#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "daemon/config.h"
#include "daemon/privileges.h"

namespace vigil::daemon {

struct RunAsUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // Supplementary groups (e.g. video for /dev/nvidia* at 0660).
};

// A user name or a numeric uid. NotFound for an unknown name.
StatusOr<RunAsUser> LookUpUser(const std::string& name);

// Makes `path` a directory `user` can write, for config key `key`: creates a missing one (and
// its parents, as root) owned by the user with `mode`; accepts one the user owns or may write;
// hands a root-owned one to the user only when `dedicated` (the daemon's own default directory,
// such as /run/vigil). Refuses symbolic links and directories owned by anyone else.
Status PrepareDirForUser(const std::string& path, std::string_view key, const RunAsUser& user,
                         mode_t mode, bool dedicated);

struct DropReport {
  std::string summary;               // "uid=65534(nobody) gid=65534 capabilities=... bounding=..."
  std::vector<std::string> reasons;  // Why each kept capability is kept (PrivilegePlan).
};

// Everything above for `config`, whose collectors `enabled_collectors` will run: resolves the
// defaults that depend on running as root (unix socket, state directory) into the config and its
// overrides, prepares directories, drops, and checks the files read later are still readable.
StatusOr<DropReport> DropPrivileges(std::span<const std::string> enabled_collectors,
                                    DaemonConfig* config);

// The calling thread's effective capabilities (capget).
StatusOr<CapabilitySet> EffectiveCapabilities();

}  // namespace vigil::daemon
