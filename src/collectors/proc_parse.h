// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the host collectors' parsers of /proc and /sys text: number fields with
// a clear error, unit conversion constants, and USER_HZ. Pure functions; any thread may call them.
// A field that is not a number yields DataLoss ("what: bad number 'x'"), never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"

namespace vigil {

// Disk sectors in /proc/diskstats are always 512 bytes, whatever the device's block size
// (include/linux/types.h SECTOR_SHIFT).
inline constexpr double kSectorBytes = 512;
// The kernel's USER_HZ on every architecture Vigil targets; used when sysconf cannot tell.
inline constexpr double kDefaultUserHz = 100;

// Parses an unsigned decimal field. DataLoss naming `what` and the bad text otherwise.
StatusOr<uint64_t> ParseCounterField(std::string_view field, std::string_view what);
// Parses a decimal floating-point field ("0.25"). DataLoss otherwise.
StatusOr<double> ParseDecimalField(std::string_view field, std::string_view what);
// USER_HZ of this host: sysconf(_SC_CLK_TCK), or kDefaultUserHz when unavailable.
double HostUserHz();
// This host's page size: sysconf(_SC_PAGESIZE), or 4096 when unavailable.
double HostPageSize();
// Reads "name value" lines (vmstat, snmp6, sockstat-like key files): for each line whose first
// field is one of `names`, stores its second field in values[index]; other lines are skipped.
// `found` gets bit i set for names[i] found (so a field absent on an older kernel stays unset).
// DataLoss naming `what` on a matched line without a number. Allocates nothing.
Status ParseNamedCounters(std::string_view text, std::span<const std::string_view> names,
                          std::span<uint64_t> values, uint64_t* found, std::string_view what);
// Reads the `section` ("Tcp", "IpExt") of a net/snmp or net/netstat file: a "Section: names"
// line followed by a "Section: values" line. For each of `names` found, stores its value in
// values[i] and sets bit i of `found`. A missing section leaves `found` 0. DataLoss when the two
// lines disagree or a value is not a number. Allocates nothing.
Status ParseSnmpFields(std::string_view text, std::string_view section,
                       std::span<const std::string_view> names, std::span<int64_t> values,
                       uint64_t* found);
// The value of "key=value" when `field` starts with `key` and '='; empty optional-like view
// (data()==nullptr) otherwise.
std::string_view ValueAfterKey(std::string_view field, std::string_view key);

}  // namespace vigil
