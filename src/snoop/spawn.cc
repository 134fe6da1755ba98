// SPDX-License-Identifier: Apache-2.0
#include "snoop/spawn.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/file_util.h"
#include "profile/elf_image.h"

namespace vigil::snoop {
namespace {

constexpr size_t kMaxArgs = 4096;

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

StatusOr<std::string> SearchPath(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (!IsExecutableFile(name)) return NotFoundError(name + ": not an executable file");
    return name;
  }
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return NotFoundError(name + ": not found in PATH");
}

}  // namespace

StatusOr<std::string> ResolveExecutable(const std::string& argv0) {
  StatusOr<std::string> path = SearchPath(argv0);
  for (int depth = 0; path.ok() && depth < 4; ++depth) {  // The kernel allows 4 levels of #!.
    StatusOr<std::string> head = ReadSmallFile(*path, 256);
    if (!head.ok() && head.status().code() != StatusCode::kDataLoss) return head.status();
    std::string text = head.ok() ? *head : "";
    if (!head.ok()) {  // Longer than 256 bytes: read the first line only.
      ScopedFd fd(open(path->c_str(), O_RDONLY | O_CLOEXEC));
      char buf[256];
      ssize_t n = fd.valid() ? read(fd.get(), buf, sizeof(buf)) : -1;
      text.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
    }
    if (text.rfind("#!", 0) != 0) return path;
    std::string line = text.substr(2, text.find('\n') - 2);
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) return InvalidArgumentError(*path + ": empty #! line");
    size_t e = line.find_first_of(" \t", b);
    std::string interpreter = line.substr(b, e == std::string::npos ? e : e - b);
    if (interpreter.size() >= 4 && interpreter.substr(interpreter.size() - 4) == "/env" &&
        e != std::string::npos) {
      size_t ab = line.find_first_not_of(" \t", e);
      if (ab != std::string::npos) {
        size_t ae = line.find_first_of(" \t", ab);
        path = SearchPath(line.substr(ab, ae == std::string::npos ? ae : ae - ab));
        continue;
      }
    }
    path = SearchPath(interpreter);
  }
  return path;
}

StatusOr<uint64_t> EntryFileOffset(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open " + path);
  Elf64_Ehdr eh;
  if (pread(fd.get(), &eh, sizeof(eh), 0) != static_cast<ssize_t>(sizeof(eh)) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return InvalidArgumentError(path + ": not a 64-bit ELF file");
  }
  StatusOr<ElfImage> image = ElfImage::Load(path, /*look_for_debug_file=*/false);
  if (!image.ok()) return image.status();
  std::optional<uint64_t> offset = image->FileOffsetOfAddress(eh.e_entry);
  if (!offset) return InvalidArgumentError(path + ": entry point outside every segment");
  return *offset;
}

StatusOr<HeldChild> ForkHeld(const std::vector<std::string>& argv) {
  if (argv.empty()) return InvalidArgumentError("no command to start");
  if (argv.size() > kMaxArgs) return InvalidArgumentError("command has too many arguments");
  StatusOr<std::string> exe = ResolveExecutable(argv[0]);
  if (!exe.ok()) return exe.status();
  StatusOr<std::string> file = SearchPath(argv[0]);
  if (!file.ok()) return file.status();
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return ErrnoStatus(err, "fork");
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    close(fds[1]);
    char c;
    ssize_t n;
    do {
      n = read(fds[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(126);  // The parent went away (or gave up) without releasing.
    execv(file->c_str(), args.data());
    _exit(127);
  }
  close(fds[0]);
  HeldChild child;
  child.pid = pid;
  child.release_fd = fds[1];
  child.executable = *exe;
  return child;
}

Status ReleaseHeld(HeldChild& child) {
  if (child.release_fd < 0) return FailedPreconditionError("child already released");
  char c = 'x';
  ssize_t n;
  do {
    n = write(child.release_fd, &c, 1);
  } while (n < 0 && errno == EINTR);
  int err = errno;
  close(child.release_fd);
  child.release_fd = -1;
  if (n != 1) return ErrnoStatus(err, "releasing the held command");
  return OkStatus();
}

char ProcessState(int pid, const std::string& proc_root) {
  StatusOr<std::string> stat = ReadSmallFile(proc_root + "/" + std::to_string(pid) + "/stat", 4096);
  if (!stat.ok()) return 0;
  size_t paren = stat->rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat->size()) return 0;
  return (*stat)[paren + 2];
}

}  // namespace vigil::snoop
