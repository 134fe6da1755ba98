// SPDX-License-Identifier: Apache-2.0
#include "metrics/selector.h"

#include <gtest/gtest.h>

#include "metrics/series_store.h"

namespace vigil {
namespace {

using Op = LabelMatcher::Op;

TEST(ParseSelectorTest, ParsesNameAndEveryOperator) {
  auto s = ParseSelector(
      R"(vigil_host_cpu_seconds_total{mode="idle", cpu!="0",device=~"sd.*" , gpu_uuid!~'GPU-1.*',})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "vigil_host_cpu_seconds_total");
  ASSERT_EQ(s->matchers.size(), 4u);
  EXPECT_EQ(s->matchers[0].name, "mode");
  EXPECT_EQ(s->matchers[0].op, Op::kEq);
  EXPECT_EQ(s->matchers[0].value, "idle");
  EXPECT_EQ(s->matchers[1].op, Op::kNe);
  EXPECT_EQ(s->matchers[2].op, Op::kRe);
  EXPECT_EQ(s->matchers[2].value, "sd.*");
  EXPECT_EQ(s->matchers[3].op, Op::kNre);
  EXPECT_EQ(s->matchers[3].value, "GPU-1.*");
}

TEST(ParseSelectorTest, AcceptsBareNameLabelsOnlyAndEmpty) {
  auto bare = ParseSelector("  vigil_gpu_flops_estimated ");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->name, "vigil_gpu_flops_estimated");
  EXPECT_TRUE(bare->matchers.empty());

  auto labels_only = ParseSelector(R"({job_id="42"})");
  ASSERT_TRUE(labels_only.ok());
  EXPECT_TRUE(labels_only->name.empty());
  ASSERT_EQ(labels_only->matchers.size(), 1u);

  EXPECT_TRUE(ParseSelector("").ok());
  EXPECT_TRUE(ParseSelector("{}").ok());
  EXPECT_TRUE(ParseSelector("recording:rule_name").ok());
}

TEST(ParseSelectorTest, UnescapesQuotedValues) {
  auto s = ParseSelector(R"({path="C:\\dir \"x\"\n", other='it\'s'})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->matchers[0].value, "C:\\dir \"x\"\n");
  EXPECT_EQ(s->matchers[1].value, "it's");
}

TEST(ParseSelectorTest, RejectsMalformedSelectors) {
  for (const char* bad : {"name{", "name{a}", "name{a=b}", "name{a=\"b\"", "name{a=\"b}",
                          "name{a==\"b\"}", "name{a=\"b\" c=\"d\"}", "name extra", "{1a=\"b\"}",
                          "name{a=\"\\q\"}", "name{a=~\"(\"}", "name{a!~\"[\"}"}) {
    auto s = ParseSelector(bad);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(CompiledSelectorTest, RegexesAreFullyAnchored) {
  auto s = ParseSelector(R"({device=~"sd[a-z]|nvme0n1"})");
  ASSERT_TRUE(s.ok());
  auto c = CompiledSelector::Compile(*s);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Matches("m", {{"device", "sda"}}));
  EXPECT_TRUE(c->Matches("m", {{"device", "nvme0n1"}}));
  EXPECT_FALSE(c->Matches("m", {{"device", "sda1"}}));
  EXPECT_FALSE(c->Matches("m", {{"device", "xsda"}}));
  EXPECT_FALSE(c->Matches("m", {{"device", "nvme0n1p1"}}));
  EXPECT_FALSE(c->Matches("m", {}));
}

TEST(CompiledSelectorTest, MissingLabelMatchesAsEmpty) {
  auto c = CompiledSelector::Compile(*ParseSelector(R"({gpu_uuid=~".*", job_id!~".+"})"));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Matches("m", {}));
  EXPECT_FALSE(c->Matches("m", {{"job_id", "7"}}));
}

TEST(CompiledSelectorTest, NameMatcherAppliesToMetricName) {
  auto c = CompiledSelector::Compile(*ParseSelector(R"({__name__=~"vigil_gpu_.*"})"));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->Matches("vigil_gpu_sm_active_ratio", {}));
  EXPECT_FALSE(c->Matches("vigil_host_load1", {}));
  auto named = CompiledSelector::Compile(*ParseSelector("vigil_host_load1"));
  EXPECT_TRUE(named->Matches("vigil_host_load1", {{"a", "b"}}));
  EXPECT_FALSE(named->Matches("vigil_host_load5", {}));
}

}  // namespace
}  // namespace vigil
