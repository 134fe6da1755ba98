// SPDX-License-Identifier: Apache-2.0
#include "daemon/privilege_drop.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/strings.h"

namespace vigil::daemon {
namespace {

// The defaults that are the daemon's own directories: a root-owned one may be handed to --user
// (systemd's RuntimeDirectory= and StateDirectory= create them as root).
constexpr std::string_view kDedicatedDirs[] = {"/run/vigil", "/var/lib/vigil", "/tmp/vigil-traces"};

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool UserCanWrite(const struct stat& st, const RunAsUser& user) {
  if (st.st_uid == user.uid) {
    return (st.st_mode & S_IWUSR) != 0 && (st.st_mode & S_IXUSR) != 0;
  }
  const bool in_group = st.st_gid == user.gid || std::find(user.groups.begin(), user.groups.end(),
                                                           st.st_gid) != user.groups.end();
  if (in_group) {
    return (st.st_mode & S_IWGRP) != 0 && (st.st_mode & S_IXGRP) != 0;
  }
  return (st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_IXOTH) != 0;
}

// Hands the directory `name` in `parent_fd`, owned by root, to the user, without following a
// link planted in its place.
Status ChownDir(int parent_fd, const std::string& path, const RunAsUser& user, mode_t mode) {
  ScopedFd fd(
      openat(parent_fd, BaseName(path).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    return ErrnoStatus(errno, "stat " + path);
  }
  if (st.st_uid != 0) {
    return FailedPreconditionError(path + " changed owner while being prepared");
  }
  if (fchown(fd.get(), user.uid, user.gid) != 0) {
    return ErrnoStatus(errno, "chown " + path);
  }
  if (fchmod(fd.get(), mode) != 0) {
    return ErrnoStatus(errno, "chmod " + path);
  }
  return OkStatus();
}

struct CapabilityState {
  CapabilitySet effective = 0;
  CapabilitySet permitted = 0;
};

StatusOr<CapabilityState> GetCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) {
    return ErrnoStatus(errno, "capget");
  }
  CapabilityState state;
  state.effective = data[0].effective | (CapabilitySet{data[1].effective} << 32);
  state.permitted = data[0].permitted | (CapabilitySet{data[1].permitted} << 32);
  return state;
}

Status SetCapabilities(CapabilitySet caps) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].effective = data[0].permitted = static_cast<uint32_t>(caps);
  data[1].effective = data[1].permitted = static_cast<uint32_t>(caps >> 32);
  if (syscall(SYS_capset, &header, data) != 0) {
    return ErrnoStatus(errno, "capset " + FormatCapabilities(caps));
  }
  return OkStatus();
}

// Removes every capability outside `keep` from the bounding set (what any later execve could
// regain). Needs CAP_SETPCAP; false when the process lacks it and the set still holds more.
StatusOr<bool> LimitBoundingSet(CapabilitySet keep) {
  bool complete = true;
  for (int cap = 0; cap < 64; ++cap) {
    const int in_set = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (in_set < 0) {
      break;  // EINVAL: past the kernel's last capability.
    }
    if (in_set == 0 || (keep & CapabilityBit(cap)) != 0) {
      continue;
    }
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno != EPERM) {
        return ErrnoStatus(errno, "drop " + CapabilityName(cap) + " from the bounding set");
      }
      complete = false;
    }
  }
  return complete;
}

CapabilitySet BoundingSet() {
  CapabilitySet set = 0;
  for (int cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) {
      set |= CapabilityBit(cap);
    }
  }
  return set;
}

Status SwitchUser(const RunAsUser& user) {
  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
    return ErrnoStatus(errno, "prctl(PR_SET_KEEPCAPS)");
  }
  if (setgroups(user.groups.size(), user.groups.data()) != 0) {
    return ErrnoStatus(errno, "setgroups for " + user.name);
  }
  if (setresgid(user.gid, user.gid, user.gid) != 0) {
    return ErrnoStatus(errno, fmt::format("setresgid {}", user.gid));
  }
  if (setresuid(user.uid, user.uid, user.uid) != 0) {
    return ErrnoStatus(errno, fmt::format("setresuid {}", user.uid));
  }
  prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  return OkStatus();
}

// Directories written after the drop, and files read after it (a reload reads the config file).
Status PrepareForUser(const DaemonConfig& config, const RunAsUser& user) {
  auto dedicated = [](const std::string& path) {
    return std::find(std::begin(kDedicatedDirs), std::end(kDedicatedDirs), path) !=
           std::end(kDedicatedDirs);
  };
  if (config.once) {
    return OkStatus();  // Collects, prints and exits: writes nothing.
  }
  if (config.unix_socket != "-") {
    const std::string dir = DirName(config.unix_socket);
    VIGIL_RETURN_IF_ERROR(PrepareDirForUser(dir, "unix_socket", user, 0755, dedicated(dir)));
  }
  VIGIL_RETURN_IF_ERROR(
      PrepareDirForUser(config.trace_root, "trace_root", user, 0755, dedicated(config.trace_root)));
  if (!config.fleet_url.empty() || !config.remote_write_url.empty()) {
    VIGIL_RETURN_IF_ERROR(
        PrepareDirForUser(config.state_dir, "state_dir", user, 0750, dedicated(config.state_dir)));
  }
  if (!config.jsonl.empty() && config.jsonl != "-") {
    VIGIL_RETURN_IF_ERROR(PrepareDirForUser(DirName(config.jsonl), "jsonl", user, 0755, false));
  }
  return OkStatus();
}

Status CheckStillReadable(const DaemonConfig& config, std::string_view who) {
  const std::pair<std::string_view, const std::string*> files[] = {
      {"config", &config.config_file},
      {"token_file", &config.token_file},
      {"fleet_token_file", &config.fleet_token_file},
      {"remote_write_auth_file", &config.remote_write_auth_file},
      {"mapping_file", &config.mapping_file},
  };
  for (const auto& [key, path] : files) {
    if (path->empty()) {
      continue;
    }
    ScopedFd fd(open(path->c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid() && errno == EACCES) {
      return PermissionDeniedError(fmt::format(
          "{} {} is not readable by {} after dropping privileges: make it readable by that "
          "user only (owner or group, mode 0600 or 0640)",
          key, *path, who));
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<RunAsUser> LookUpUser(const std::string& name) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  const std::optional<int64_t> numeric = ParseInt64(name);
  const int err =
      numeric ? getpwuid_r(static_cast<uid_t>(*numeric), &pw, buf.data(), buf.size(), &found)
              : getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (err != 0) {
    return ErrnoStatus(err, "look up user " + name);
  }
  if (found == nullptr) {
    return NotFoundError("user " + name + " does not exist (create it, e.g. useradd --system " +
                         name + ")");
  }
  RunAsUser user;
  user.name = pw.pw_name;
  user.uid = pw.pw_uid;
  user.gid = pw.pw_gid;
  int count = 64;
  user.groups.resize(static_cast<size_t>(count));
  if (getgrouplist(pw.pw_name, pw.pw_gid, user.groups.data(), &count) < 0) {
    user.groups.resize(static_cast<size_t>(count));
    getgrouplist(pw.pw_name, pw.pw_gid, user.groups.data(), &count);
  }
  user.groups.resize(static_cast<size_t>(std::max(count, 0)));
  return user;
}

Status PrepareDirForUser(const std::string& path, std::string_view key, const RunAsUser& user,
                         mode_t mode, bool dedicated) {
  if (path.empty() || path == "/") {
    return OkStatus();
  }
  const std::string parent = DirName(path);
  VIGIL_RETURN_IF_ERROR(MakeDirs(parent, 0755).WithContext(key));
  ScopedFd parent_fd(open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd.valid()) {
    return ErrnoStatus(errno, "open " + parent).WithContext(key);
  }
  const std::string name = BaseName(path);
  if (mkdirat(parent_fd.get(), name.c_str(), 0700) == 0) {
    return ChownDir(parent_fd.get(), path, user, mode).WithContext(key);
  }
  if (errno != EEXIST) {
    return ErrnoStatus(errno, "mkdir " + path).WithContext(key);
  }
  struct stat st {};
  if (fstatat(parent_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "stat " + path).WithContext(key);
  }
  if (!S_ISDIR(st.st_mode)) {
    return FailedPreconditionError(fmt::format("{}: {} is not a directory{}", key, path,
                                               S_ISLNK(st.st_mode) ? " (a symbolic link)" : ""));
  }
  if (st.st_uid == user.uid) {
    return OkStatus();
  }
  if (st.st_uid == 0 && dedicated && (st.st_mode & 0022) == 0) {
    return ChownDir(parent_fd.get(), path, user, mode).WithContext(key);
  }
  if (st.st_uid == 0 && UserCanWrite(st, user)) {
    return OkStatus();
  }
  return FailedPreconditionError(fmt::format(
      "{}: directory {} is owned by uid {} and not writable by user {}: chown it to {} or choose "
      "another {}",
      key, path, st.st_uid, user.name, user.name, key));
}

StatusOr<CapabilitySet> EffectiveCapabilities() {
  VIGIL_ASSIGN_OR_RETURN(CapabilityState state, GetCapabilities());
  return state.effective;
}

StatusOr<DropReport> DropPrivileges(std::span<const std::string> enabled_collectors,
                                    DaemonConfig* config) {
  const bool root = geteuid() == 0;
  std::optional<RunAsUser> user;
  if (!config->user.empty()) {
    VIGIL_ASSIGN_OR_RETURN(RunAsUser found, LookUpUser(config->user));
    if (found.uid != 0) {
      user = std::move(found);
    }
  }
  if (user && !root) {
    return FailedPreconditionError(fmt::format(
        "--user {} needs vigild started as root (it runs as uid {})", config->user, geteuid()));
  }
  if (user) {
    // These defaults follow the effective uid; fix them to root's before it changes, for this
    // run and for every reload.
    for (auto [key, field, value] :
         {std::tuple{"unix_socket", &config->unix_socket, DefaultUnixSocketPath()},
          std::tuple{"state_dir", &config->state_dir, DefaultStateDir()}}) {
      if (field->empty()) {
        *field = value;
        config->overrides.emplace_back(key, value);
      }
    }
    VIGIL_RETURN_IF_ERROR(PrepareForUser(*config, *user));
  }

  const PrivilegePlan plan = PlanPrivileges(EnabledFeatures(*config, enabled_collectors));
  VIGIL_ASSIGN_OR_RETURN(CapabilityState before, GetCapabilities());
  const CapabilitySet keep = plan.keep & before.permitted;
  VIGIL_ASSIGN_OR_RETURN(bool bounded, LimitBoundingSet(keep));
  if (user) {
    VIGIL_RETURN_IF_ERROR(SwitchUser(*user));
  }
  VIGIL_RETURN_IF_ERROR(SetCapabilities(keep));
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);  // EINVAL before Linux 4.3: none.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return ErrnoStatus(errno, "prctl(PR_SET_NO_NEW_PRIVS)");
  }

  VIGIL_ASSIGN_OR_RETURN(CapabilityState after, GetCapabilities());
  if (after.effective != keep || after.permitted != keep) {
    return InternalError("capabilities after the drop are " + FormatCapabilities(after.permitted) +
                         ", not " + FormatCapabilities(keep));
  }
  if (user && setresuid(0, 0, 0) == 0) {
    return InternalError("regained uid 0 after dropping to " + user->name);
  }
  const std::string who = user ? user->name : fmt::format("uid {}", geteuid());
  VIGIL_RETURN_IF_ERROR(CheckStillReadable(*config, who));
  DropReport report;
  report.summary = fmt::format("uid={}({}) gid={} capabilities={} bounding={}{}", geteuid(),
                               user ? user->name : std::string(root ? "root" : "-"), getegid(),
                               FormatCapabilities(keep), FormatCapabilities(BoundingSet()),
                               bounded ? "" : " (no cap_setpcap: bounding set left as given)");
  report.reasons = plan.reasons;
  return report;
}

}  // namespace vigil::daemon
