// SPDX-License-Identifier: Apache-2.0
// The job mapping file: an operator-written TOML list of rules that map a job id, cgroup path or
// user (regexes) to team/model/framework, and optionally name the job. Format and examples in
// docs/attribution.md. A JobMapping is immutable once parsed; Apply() is const and thread-safe.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/job_info.h"
#include "base/status.h"

namespace vigil {

struct MappingRule {
  // Conditions (ECMAScript regexes, searched anywhere in the value; anchor with ^...$). Every
  // condition present must match; a rule has at least one.
  std::optional<std::regex> match_job_id;
  std::optional<std::regex> match_cgroup;
  std::optional<std::regex> match_user;
  // What a matching rule sets; "" sets nothing.
  std::string job_id;
  std::string team;
  std::string model;
  std::string framework;
};

class JobMapping {
 public:
  JobMapping() = default;

  // Parses TOML text; `origin` names it in errors. InvalidArgument on bad TOML, an unknown key,
  // a bad regex or a rule without conditions.
  static StatusOr<JobMapping> Parse(std::string_view text, std::string_view origin);
  // Reads and parses a file (NotFound when missing).
  static StatusOr<JobMapping> Load(const std::string& path);

  // Applies every matching rule in file order; each fills only fields still empty, so the first
  // rule that sets a field wins. Returns true when some rule matched.
  bool Apply(JobInfo* info) const;

  size_t size() const { return rules_.size(); }

 private:
  std::vector<MappingRule> rules_;
};

}  // namespace vigil
