// SPDX-License-Identifier: Apache-2.0
#include "attribution/mapping_file.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

JobInfo Job(std::string job_id, std::string user, std::string cgroup, std::string team = "") {
  JobInfo info;
  info.job_id = std::move(job_id);
  info.user = std::move(user);
  info.cgroup = std::move(cgroup);
  info.team = std::move(team);
  return info;
}

constexpr char kMapping[] = R"(
[[rule]]
match_job_id = "^train-"
team = "llm"
model = "llama-70b"

[[rule]]
match_user = "^alice$"
team = "vision"
framework = "jax"

[[rule]]
match_cgroup = "^/system\\.slice/batch\\.service$"
job_id = "batch"
)";

TEST(MappingFileTest, FirstMatchingRuleFillsEachField) {
  auto mapping = JobMapping::Parse(kMapping, "test.toml");
  ASSERT_TRUE(mapping.ok()) << mapping.status().ToString();
  ASSERT_EQ(mapping->size(), 3u);

  JobInfo info = Job("train-42", "alice", "");
  EXPECT_TRUE(mapping->Apply(&info));

  EXPECT_EQ(info.team, "llm");  // Rule 1 set it first; rule 2's "vision" does not override.
  EXPECT_EQ(info.model, "llama-70b");
  EXPECT_EQ(info.framework, "jax");  // Only rule 2 sets a framework.
  EXPECT_EQ(info.job_id, "train-42");
}

TEST(MappingFileTest, ExistingFieldsAreNeverOverwritten) {
  auto mapping = JobMapping::Parse(kMapping, "test.toml");
  ASSERT_TRUE(mapping.ok());

  JobInfo info = Job("train-1", "", "", "from-env");
  mapping->Apply(&info);

  EXPECT_EQ(info.team, "from-env");
}

TEST(MappingFileTest, CgroupRuleCanNameTheJob) {
  auto mapping = JobMapping::Parse(kMapping, "test.toml");
  ASSERT_TRUE(mapping.ok());

  JobInfo info = Job("", "", "/system.slice/batch.service");
  EXPECT_TRUE(mapping->Apply(&info));

  EXPECT_EQ(info.job_id, "batch");
}

TEST(MappingFileTest, JobIdConditionNeverMatchesAProcessWithoutAJob) {
  auto mapping = JobMapping::Parse("[[rule]]\nmatch_job_id = \".*\"\nteam = \"x\"\n", "t");
  ASSERT_TRUE(mapping.ok());

  JobInfo info = Job("", "bob", "");
  EXPECT_FALSE(mapping->Apply(&info));
  EXPECT_EQ(info.team, "");
}

TEST(MappingFileTest, AllConditionsOfARuleMustMatch) {
  auto mapping = JobMapping::Parse(
      "[[rule]]\nmatch_user = \"^bob$\"\nmatch_cgroup = \"^/slurm\"\nteam = \"hpc\"\n", "t");
  ASSERT_TRUE(mapping.ok());

  JobInfo wrong_cgroup = Job("", "bob", "/system.slice");
  JobInfo both = Job("", "bob", "/slurm/uid_1/job_2");

  EXPECT_FALSE(mapping->Apply(&wrong_cgroup));
  EXPECT_TRUE(mapping->Apply(&both));
  EXPECT_EQ(both.team, "hpc");
}

struct BadCase {
  const char* text;
  const char* error_part;
};

constexpr BadCase kBadCases[] = {
    {"[[rule]]\nmatch_user = \"(\"\n", "bad regex"},
    {"[[rule]]\nteam = \"x\"\n", "needs match_job_id"},
    {"[[rule]]\nmatch_user = \"a\"\ntem = \"typo\"\n", "unknown key 'tem'"},
    {"[[rule]]\nmatch_user = 3\n", "must be a string"},
    {"rule = \"x\"\n", "array of tables"},
    {"[other]\nx = 1\n", "unknown top-level key"},
    {"[[rule]\n", "bad.toml:1"},
};

TEST(MappingFileTest, RejectsBadFilesWithAReason) {
  for (const BadCase& c : kBadCases) {
    SCOPED_TRACE(c.text);
    auto mapping = JobMapping::Parse(c.text, "bad.toml");
    ASSERT_FALSE(mapping.ok());
    EXPECT_EQ(mapping.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(mapping.status().message().find(c.error_part), std::string::npos)
        << mapping.status().message();
  }
}

TEST(MappingFileTest, EmptyFileMapsNothing) {
  auto mapping = JobMapping::Parse("# nothing yet\n", "t");
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ(mapping->size(), 0u);
}

TEST(MappingFileTest, MissingFileIsNotFound) {
  auto mapping = JobMapping::Load("/nonexistent/vigil/mapping.toml");
  EXPECT_EQ(mapping.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
