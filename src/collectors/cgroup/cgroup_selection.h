// SPDX-License-Identifier: Apache-2.0
// Which cgroups the cgroup collector reports: path globs expanded over the hierarchies, the
// default globs (the root, its direct children, SLURM job and Kubernetes pod directories), and
// the cgroups a process belongs to. Reads directories only; thread-compatible.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/cgroup_path_rules.h"
#include "collectors/cgroup/cgroup_layout.h"

namespace vigil {

// Used when CgroupCollectorOptions::patterns is empty.
std::span<const std::string_view> DefaultCgroupPatterns();

// Expands `pattern` ("/slurm/uid_*/job_*", fnmatch syntax per path segment) below the hierarchy
// directory `root`. Returns cgroup paths ("/slurm/uid_1/job_2"), sorted; "/" for the root itself.
// At most `limit` results.
std::vector<std::string> ExpandCgroupGlob(const std::string& root, std::string_view pattern,
                                          size_t limit);

// The directories of the hierarchies the layout reads from: the unified root on v2, the cpu,
// cpuacct, memory and blkio roots on v1 and hybrid hosts. Distinct, in that order.
std::vector<std::string> StatRoots(const CgroupLayout& layout);

// The cgroup paths a process's membership points at, for the given layout: its unified path on
// v2; on v1 and hybrid hosts its distinct cpu, cpuacct, memory and blkio paths (these may differ,
// e.g. a memory-only sub-cgroup), plus the unified path when it is below the root.
std::vector<std::string> CgroupPathsOfProcess(const ProcCgroups& cgroups,
                                              const CgroupLayout& layout);

}  // namespace vigil
