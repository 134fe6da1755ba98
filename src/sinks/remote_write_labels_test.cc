// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_labels.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

SeriesLabelOptions Host(std::string value) {
  SeriesLabelOptions o;
  o.host_value = std::move(value);
  return o;
}

TEST(RemoteWriteLabelsTest, NameFirstThenSortedWithHostAdded) {
  StatusOr<RwLabels> labels =
      BuildSeriesLabels("vigil_gpu_busy_seconds_total",
                        {{"job_id", "j1"}, {"gpu_uuid", "GPU-1"}, {"team", "infra"}}, Host("n1"));
  ASSERT_TRUE(labels.ok()) << labels.status().ToString();
  EXPECT_EQ(*labels, (RwLabels{{"__name__", "vigil_gpu_busy_seconds_total"},
                               {"gpu_uuid", "GPU-1"},
                               {"host", "n1"},
                               {"job_id", "j1"},
                               {"team", "infra"}}));
}

TEST(RemoteWriteLabelsTest, SamplesOwnHostLabelWins) {
  StatusOr<RwLabels> labels = BuildSeriesLabels("m", {{"host", "other"}}, Host("n1"));
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, (RwLabels{{"__name__", "m"}, {"host", "other"}}));
}

TEST(RemoteWriteLabelsTest, HostLabelNameIsConfigurableAndCanBeOff) {
  SeriesLabelOptions o = Host("n1");
  o.host_label_name = "instance";
  EXPECT_EQ(*BuildSeriesLabels("m", {}, o), (RwLabels{{"__name__", "m"}, {"instance", "n1"}}));
  EXPECT_EQ(*BuildSeriesLabels("m", {}, Host("")), (RwLabels{{"__name__", "m"}}));
}

TEST(RemoteWriteLabelsTest, EmptyValuesAreLeftOut) {
  EXPECT_EQ(*BuildSeriesLabels("m", {{"a", ""}, {"b", "1"}}, Host("")),
            (RwLabels{{"__name__", "m"}, {"b", "1"}}));
}

TEST(RemoteWriteLabelsTest, DuplicateLabelNamesAreRejected) {
  StatusOr<RwLabels> labels =
      BuildSeriesLabels("m", {{"a", "1"}, {"b", "2"}, {"a", "3"}}, Host(""));
  ASSERT_FALSE(labels.ok());
  EXPECT_EQ(labels.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(labels.status().message().find("duplicate label name \"a\""), std::string::npos);
  EXPECT_FALSE(BuildSeriesLabels("m", {{"a", ""}, {"a", "1"}}, Host("")).ok());
}

TEST(RemoteWriteLabelsTest, InvalidNamesAreRejected) {
  EXPECT_FALSE(BuildSeriesLabels("1bad", {}, Host("")).ok());
  EXPECT_FALSE(BuildSeriesLabels("bad-name", {}, Host("")).ok());
  EXPECT_FALSE(BuildSeriesLabels("m", {{"bad-label", "x"}}, Host("")).ok());
  EXPECT_FALSE(BuildSeriesLabels("m", {{"__name__", "x"}}, Host("")).ok());
  EXPECT_FALSE(BuildSeriesLabels("m", {{"__reserved", "x"}}, Host("")).ok());
  EXPECT_FALSE(BuildSeriesLabels("m", {{"", "x"}}, Host("")).ok());
  EXPECT_TRUE(BuildSeriesLabels("ns:rule_m", {{"_x9", "anything goes: \"\n"}}, Host("")).ok());
}

TEST(RemoteWriteLabelsTest, NameValidators) {
  EXPECT_TRUE(IsValidMetricName("a:b_c9"));
  EXPECT_TRUE(IsValidMetricName(":a"));
  EXPECT_FALSE(IsValidMetricName(""));
  EXPECT_FALSE(IsValidMetricName("9a"));
  EXPECT_TRUE(IsValidLabelName("_a9"));
  EXPECT_FALSE(IsValidLabelName("a:b"));
  EXPECT_FALSE(IsValidLabelName("é"));
}

TEST(RemoteWriteLabelsTest, SeriesKeyDistinguishesNameValueSplits) {
  EXPECT_NE(SeriesKey({{"ab", "c"}}), SeriesKey({{"a", "bc"}}));
  EXPECT_EQ(SeriesKey({{"a", "b"}}), SeriesKey({{"a", "b"}}));
}

}  // namespace
}  // namespace vigil
