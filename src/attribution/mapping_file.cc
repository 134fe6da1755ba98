// SPDX-License-Identifier: Apache-2.0
#include "attribution/mapping_file.h"

#include <exception>
#include <sstream>

#include <toml++/toml.h>

#include "base/file_util.h"

namespace vigil {
namespace {

constexpr size_t kMaxMappingFileBytes = 1 << 20;

Status CompileRegex(std::string_view pattern, std::string_view where,
                    std::optional<std::regex>* out) {
  try {
    *out = std::regex(std::string(pattern), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return InvalidArgumentError(std::string(where) + ": bad regex '" + std::string(pattern) +
                                "': " + e.what());
  }
  return OkStatus();
}

bool Matches(const std::optional<std::regex>& re, const std::string& value) {
  return !re || std::regex_search(value, *re);
}

void Fill(std::string* field, const std::string& value) {
  if (field->empty() && !value.empty()) {
    *field = value;
  }
}

StatusOr<MappingRule> ParseRule(const toml::table& table, const std::string& where) {
  MappingRule rule;
  bool has_condition = false;
  for (const auto& [key_node, node] : table) {
    const std::string key(key_node.str());
    const std::optional<std::string> value = node.value<std::string>();
    if (!value) {
      return InvalidArgumentError(where + ": key '" + key + "' must be a string");
    }
    const std::string at = where + "." + key;
    if (key == "match_job_id") {
      VIGIL_RETURN_IF_ERROR(CompileRegex(*value, at, &rule.match_job_id));
      has_condition = true;
    } else if (key == "match_cgroup") {
      VIGIL_RETURN_IF_ERROR(CompileRegex(*value, at, &rule.match_cgroup));
      has_condition = true;
    } else if (key == "match_user") {
      VIGIL_RETURN_IF_ERROR(CompileRegex(*value, at, &rule.match_user));
      has_condition = true;
    } else if (key == "job_id") {
      rule.job_id = *value;
    } else if (key == "team") {
      rule.team = *value;
    } else if (key == "model") {
      rule.model = *value;
    } else if (key == "framework") {
      rule.framework = *value;
    } else {
      return InvalidArgumentError(where + ": unknown key '" + key + "'");
    }
  }
  if (!has_condition) {
    return InvalidArgumentError(where + ": a rule needs match_job_id, match_cgroup or match_user");
  }
  return rule;
}

}  // namespace

StatusOr<JobMapping> JobMapping::Parse(std::string_view text, std::string_view origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << origin << ":" << e.source().begin.line << ": " << e.description();
    return InvalidArgumentError(msg.str());
  }
  JobMapping mapping;
  for (const auto& [key_node, node] : root) {
    if (key_node.str() != "rule") {
      return InvalidArgumentError(std::string(origin) + ": unknown top-level key '" +
                                  std::string(key_node.str()) + "'");
    }
  }
  const toml::node* rules = root.get("rule");
  if (rules == nullptr) {
    return mapping;  // An empty file maps nothing.
  }
  const toml::array* array = rules->as_array();
  if (array == nullptr) {
    return InvalidArgumentError(std::string(origin) + ": 'rule' must be an array of tables");
  }
  for (size_t i = 0; i < array->size(); ++i) {
    const std::string where = std::string(origin) + ": rule[" + std::to_string(i) + "]";
    const toml::table* table = array->get(i)->as_table();
    if (table == nullptr) {
      return InvalidArgumentError(where + ": must be a table ([[rule]])");
    }
    VIGIL_ASSIGN_OR_RETURN(MappingRule rule, ParseRule(*table, where));
    mapping.rules_.push_back(std::move(rule));
  }
  return mapping;
}

StatusOr<JobMapping> JobMapping::Load(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxMappingFileBytes));
  return Parse(text, path);
}

bool JobMapping::Apply(JobInfo* info) const {
  bool matched = false;
  for (const MappingRule& rule : rules_) {
    if (!Matches(rule.match_job_id, info->job_id) || !Matches(rule.match_cgroup, info->cgroup) ||
        !Matches(rule.match_user, info->user)) {
      continue;
    }
    // A job_id condition never matches a process without a job.
    if (rule.match_job_id && info->job_id.empty()) {
      continue;
    }
    matched = true;
    Fill(&info->job_id, rule.job_id);
    Fill(&info->team, rule.team);
    Fill(&info->model, rule.model);
    Fill(&info->framework, rule.framework);
  }
  return matched;
}

}  // namespace vigil
