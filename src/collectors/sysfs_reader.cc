// SPDX-License-Identifier: Apache-2.0
#include "collectors/sysfs_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>

#include "base/file_util.h"
#include "base/strings.h"
#include "collectors/kept_files.h"

namespace vigil {

SysfsReader::SysfsReader() : buf_(new char[kBufferBytes]) {}

SysfsReader::~SysfsReader() { CloseKept(); }

void SysfsReader::CloseKept() {
  for (auto& [path, kept] : kept_) {
    close(kept.fd);
  }
  ReturnKeptFileSlots(static_cast<int>(kept_.size()));
  kept_.clear();
}

StatusOr<std::string_view> SysfsReader::PreadAll(int fd, const std::string& path) {
  ssize_t n;
  do {
    n = pread(fd, buf_.get(), kBufferBytes, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    // Some attributes fail reads when the device cannot answer (EINVAL for the speed of a link
    // that is down, EIO or ENODATA for a sensor that is not connected); a removed one ENODEV.
    return ErrnoStatus(errno, "read " + path);
  }
  if (static_cast<size_t>(n) == kBufferBytes) {
    return DataLossError("read " + path + ": larger than " + std::to_string(kBufferBytes) +
                         " bytes");
  }
  return Trim(std::string_view(buf_.get(), static_cast<size_t>(n)));
}

StatusOr<std::string_view> SysfsReader::Read(const std::string& path) {
  ScopedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, "open " + path);
  }
  return PreadAll(fd.get(), path);
}

StatusOr<std::string_view> SysfsReader::ReadKept(const std::string& path) {
  auto it = kept_.find(path);
  if (it == kept_.end()) {
    if (!TakeKeptFileSlot()) {
      return Read(path);  // Over budget: open and close as usual.
    }
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      ReturnKeptFileSlots(1);
      return ErrnoStatus(err, "open " + path);
    }
    it = kept_.emplace(path, Kept{fd, !OnPseudoFilesystem(fd)}).first;
  }
  struct stat st {};
  if (it->second.check_unlinked && fstat(it->second.fd, &st) == 0 && st.st_nlink == 0) {
    close(it->second.fd);
    kept_.erase(it);
    ReturnKeptFileSlots(1);
    return NotFoundError("read " + path + ": file removed");
  }
  return PreadAll(it->second.fd, path);
}

StatusOr<uint64_t> SysfsReader::ReadUint(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string_view text, Read(path));
  std::optional<uint64_t> v = ParseUint64(text);
  if (!v) {
    return DataLossError(path + ": bad number '" + SanitizeForLog(text, 40) + "'");
  }
  return *v;
}

StatusOr<int64_t> SysfsReader::ReadInt(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string_view text, Read(path));
  std::optional<int64_t> v = ParseInt64(text);
  if (!v) {
    return DataLossError(path + ": bad number '" + SanitizeForLog(text, 40) + "'");
  }
  return *v;
}

StatusOr<double> SysfsReader::ReadNumber(const std::string& path, bool kept) {
  VIGIL_ASSIGN_OR_RETURN(std::string_view text, kept ? ReadKept(path) : Read(path));
  if (text.starts_with('-')) {
    if (std::optional<int64_t> v = ParseInt64(text)) {
      return static_cast<double>(*v);
    }
  } else if (std::optional<uint64_t> v = ParseUint64(text)) {
    return static_cast<double>(*v);
  }
  return DataLossError(path + ": bad number '" + SanitizeForLog(text, 40) + "'");
}

StatusOr<double> SysfsReader::ReadHex(const std::string& path, bool kept) {
  VIGIL_ASSIGN_OR_RETURN(std::string_view text, kept ? ReadKept(path) : Read(path));
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
  }
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return DataLossError(path + ": bad hex number '" + SanitizeForLog(text, 40) + "'");
  }
  return static_cast<double>(v);
}

Status EmitPlanned(const std::vector<PlannedValue>& plan, SysfsReader& reader,
                   RescanSchedule& schedule, MetricWriter& out) {
  Status error;
  for (const PlannedValue& p : plan) {
    StatusOr<double> v = p.hex ? reader.ReadHex(p.path, true) : reader.ReadNumber(p.path, true);
    if (v.ok()) {
      if (!p.skip_negative || *v >= 0) {
        out.Add(*p.desc, *v * p.scale, p.labels);
      }
    } else if (v.status().code() == StatusCode::kNotFound) {
      schedule.Invalidate();
    } else if (v.status().code() == StatusCode::kDataLoss && error.ok()) {
      error = v.status();
    }
  }
  return error;
}

bool RescanSchedule::Due() {
  const bool due = invalid_ || since_ >= every_;
  if (due) {
    since_ = 0;
    invalid_ = false;
  }
  ++since_;
  return due;
}

std::vector<std::string> ListSorted(const std::string& path, std::string_view prefix,
                                    Status* error) {
  StatusOr<std::vector<std::string>> names = ListDir(path);
  if (!names.ok()) {
    *error = names.status();
    return {};
  }
  std::erase_if(*names, [&](const std::string& n) { return !n.starts_with(prefix); });
  std::sort(names->begin(), names->end());
  return std::move(*names);
}

bool NumberAfterPrefix(std::string_view name, std::string_view prefix, uint64_t* number) {
  if (!name.starts_with(prefix)) {
    return false;
  }
  std::optional<uint64_t> v = ParseUint64(name.substr(prefix.size()));
  if (!v) {
    return false;
  }
  *number = *v;
  return true;
}

std::string LinkTargetName(const std::string& path) {
  char target[PATH_MAX];
  const ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
  if (n <= 0) {
    return {};
  }
  std::string_view t(target, static_cast<size_t>(n));
  while (t.ends_with('/')) {
    t.remove_suffix(1);
  }
  const size_t slash = t.rfind('/');
  return std::string(slash == std::string_view::npos ? t : t.substr(slash + 1));
}

}  // namespace vigil
