// SPDX-License-Identifier: Apache-2.0
// Cheap reads of sysfs attribute files for the /sys collectors: one pread per file into a buffer
// allocated once per collector (a sysfs attribute is at most one page, so one pread returns all
// of it), and a schedule that says when to list directories again. Files read every tick are
// kept open between ticks (ReadKept): a pread at offset 0 makes sysfs run the attribute's show()
// again, so only the first tick pays the path walk, open and close. A process-wide budget
// (kMaxKeptFiles, kept_files.h) bounds the descriptors kept; past it, reads open and close as
// Read() does. Listing sysfs is the expensive part of a tick, so collectors keep a plan of the
// files to read and rebuild it only every `every` ticks, or on the next tick after a planned file
// disappeared (a device went away). Not thread-safe: each collector owns its own reader on its
// collection sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "metrics/metric.h"

namespace vigil {

class SysfsReader {
 public:
  // 64 KiB covers the largest page size of the architectures Vigil targets (arm64 64K pages).
  static constexpr size_t kBufferBytes = 64 << 10;

  SysfsReader();
  // The file's text without surrounding white space; valid until the next call. NotFound or
  // PermissionDenied when the file cannot be opened, DataLoss when it fills the whole buffer.
  StatusOr<std::string_view> Read(const std::string& path);
  // Read() through a descriptor kept open until CloseKept(). A removed sysfs file answers
  // ENODEV (NotFound); on other filesystems (fixture trees) an unlinked file is NotFound too.
  StatusOr<std::string_view> ReadKept(const std::string& path);
  // Closes every kept descriptor: call before relisting, so vanished files are not held.
  void CloseKept();
  ~SysfsReader();
  SysfsReader(const SysfsReader&) = delete;
  SysfsReader& operator=(const SysfsReader&) = delete;
  // Read() parsed as an unsigned / signed decimal integer. DataLoss names the path and the text.
  StatusOr<uint64_t> ReadUint(const std::string& path);
  StatusOr<int64_t> ReadInt(const std::string& path);
  // Either of the two, as a double (counters may exceed INT64_MAX, temperatures are negative).
  // `kept`: through ReadKept().
  StatusOr<double> ReadNumber(const std::string& path, bool kept = false);
  // "0x1003" or "1003" as hexadecimal.
  StatusOr<double> ReadHex(const std::string& path, bool kept = false);

 private:
  struct Kept {
    int fd;
    bool check_unlinked;  // Not a pseudo filesystem: pread on an unlinked file still answers.
  };
  StatusOr<std::string_view> PreadAll(int fd, const std::string& path);

  std::unique_ptr<char[]> buf_;
  std::unordered_map<std::string, Kept> kept_;
};

// Decides on which ticks a collector lists its directories again.
class RescanSchedule {
 public:
  static constexpr int kDefaultEvery = 60;  // Ticks: a minute at the default 1 s interval.

  explicit RescanSchedule(int every = kDefaultEvery) : every_(every > 0 ? every : 1) {}
  // True on the first call, every `every` calls after that, and after Invalidate().
  bool Due();
  // A planned file vanished or a listing failed: rescan on the next tick.
  void Invalidate() { invalid_ = true; }
  // Runs `rescan` (returning Status) when Due(); a failed one is retried on the next tick (a
  // driver may load later). OK when no rescan was due.
  template <typename Rescan>
  Status RescanIfDue(Rescan&& rescan) {
    if (!Due()) {
      return OkStatus();
    }
    Status s = rescan();
    if (!s.ok()) {
      Invalidate();
    }
    return s;
  }

 private:
  int every_;
  int since_ = 0;  // Calls since the last rescan.
  bool invalid_ = true;
};

// One number a collector reads every tick: the file, the family, the factor to base units.
struct PlannedValue {
  std::string path;
  const MetricDesc* desc = nullptr;
  double scale = 1;
  Labels labels;
  bool hex = false;            // "0x1003" (net flags, dev_id).
  bool skip_negative = false;  // -1 means "unknown" (net speed of a link without carrier).
};
// Reads every planned value and adds it to `out`. A vanished file invalidates `schedule` and is
// skipped; a file the driver cannot answer (EIO, ENODATA, EINVAL, EAGAIN) is skipped; a file
// whose text is not a number is skipped and its DataLoss returned (the first one), with the rest
// still read.
Status EmitPlanned(const std::vector<PlannedValue>& plan, SysfsReader& reader,
                   RescanSchedule& schedule, MetricWriter& out);

// Names in `path`, sorted, keeping only those starting with `prefix` (all when empty). The status
// of the listing goes to *error when it fails (and the list is empty).
std::vector<std::string> ListSorted(const std::string& path, std::string_view prefix,
                                    Status* error);
// "hwmon10" with prefix "hwmon" -> 10; false when the rest is not a decimal number.
bool NumberAfterPrefix(std::string_view name, std::string_view prefix, uint64_t* number);
// The last path component of where the symlink `path` points; empty when it is not a symlink.
std::string LinkTargetName(const std::string& path);

}  // namespace vigil
