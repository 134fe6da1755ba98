// SPDX-License-Identifier: Apache-2.0
#include "cli/format.h"

#include <cmath>

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(FormatTest, ValuesKeepIntegersWhole) {
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(12345678901.0), "12345678901");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatValue(1.0 / 3), "0.333333");
}

TEST(FormatTest, BytesUseBinaryUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(3.0 * (1 << 30)), "3.0 GiB");
}

TEST(FormatTest, SecondsReadLikeUptime) {
  EXPECT_EQ(FormatSeconds(1.25), "1.2s");
  EXPECT_EQ(FormatSeconds(12), "12s");
  EXPECT_EQ(FormatSeconds(312), "5m12s");
  EXPECT_EQ(FormatSeconds(7380), "2h03m");
  EXPECT_EQ(FormatSeconds(273600), "3d04h");
  EXPECT_EQ(FormatSeconds(-1), "-");
}

TEST(FormatTest, LabelsAreSortedAndEscaped) {
  EXPECT_EQ(FormatLabels({}), "");
  EXPECT_EQ(FormatLabels({{"mode", "idle"}, {"cpu", "0"}}), R"({cpu="0",mode="idle"})");
  EXPECT_EQ(FormatLabels({{"a", "x\"y"}}), R"({a="x\"y"})");
}

TEST(TextTableTest, AlignsColumnsWithoutTrailingSpaces) {
  TextTable t({"NAME", "VALUE", "UNIT"});
  t.AlignRight(1);
  t.AddRow({"a", "1", "bytes"});
  t.AddRow({"longer_name", "12345", ""});
  EXPECT_EQ(t.Render(),
            "NAME         VALUE  UNIT\n"
            "a                1  bytes\n"
            "longer_name  12345\n");
}

}  // namespace
}  // namespace vigil
