// SPDX-License-Identifier: Apache-2.0
// SLURM host-list syntax, as `vigil trace --hosts` and `--hostfile` accept it:
// "node[01-64,70]" (ranges and single numbers, zero padding kept from the first bound),
// several bracket groups ("rack[1-2]-gpu[0-3]"), "host:port" entries ("127.0.0.1:[1801-1832]"),
// and comma-separated lists of any of these ("a,b[1-3],c:1779"). Expansion is capped so a typo
// cannot allocate millions of names. Pure functions; thread-compatible. Owner: base.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace vigil {

inline constexpr size_t kMaxHostListSize = 100000;

// Expands a host list in order, keeping duplicates. InvalidArgument on unbalanced or nested
// brackets, empty items, reversed ranges or non-numeric bounds; ResourceExhausted above
// max_hosts names.
StatusOr<std::vector<std::string>> ExpandHostList(std::string_view text,
                                                  size_t max_hosts = kMaxHostListSize);

// Reads a hostfile: one host list per line; '#' starts a comment; only the first
// whitespace-separated field counts (so MPI-style "node1 slots=8" works).
StatusOr<std::vector<std::string>> ReadHostFile(const std::string& path,
                                                size_t max_hosts = kMaxHostListSize);

}  // namespace vigil
