// SPDX-License-Identifier: Apache-2.0
#include "profile/python_line_table.h"

#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

// Entry byte: 0x80 | code << 3 | (length - 1).
char Entry(int code, int length) { return static_cast<char>(0x80 | code << 3 | (length - 1)); }

TEST(PythonLineTableTest, ShortOneLineNoColumnAndLongForms) {
  std::string table;
  table += Entry(0, 2);  // Short form: line 10 (first line), units 0-1.
  table += '\x05';
  table += Entry(11, 3);  // One-line form, +1: line 11, units 2-4.
  table += '\x04';
  table += '\x08';
  table += Entry(13, 1);  // No column, svarint +3 (6): line 14, unit 5.
  table += '\x06';
  table += Entry(14, 2);  // Long form, svarint -2 (5): line 12, units 6-7.
  table += '\x05';
  table += '\x00';
  table += '\x01';
  table += '\x01';
  table += Entry(15, 1);  // No location: unit 8.

  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 0), 10);
  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 1), 10);
  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 2), 11);
  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 4), 11);
  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 5), 14);
  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 7), 12);
  EXPECT_EQ(PythonLineOfCodeUnit(table, 10, 8), -1);
}

TEST(PythonLineTableTest, MultiByteVarintDelta) {
  std::string table;
  table += Entry(13, 1);
  // +100 -> svarint 200 = 0b11001000: low 6 bits 8 with continuation, then 3.
  table += static_cast<char>(0x40 | 8);
  table += '\x03';

  EXPECT_EQ(PythonLineOfCodeUnit(table, 1, 0), 101);
}

TEST(PythonLineTableTest, Python310LineTableRangesAndNoLine) {
  // Bytes [0,6) line 5, [6,6) +2 (empty), [6,10) +1 -> 8, [10,12) no line, [12,20) -3 -> 5.
  const std::string table("\x06\x00\x00\x02\x04\x01\x02\x80\x08\xfd", 10);

  EXPECT_EQ(PythonLineOf310Table(table, 5, 0), 5);
  EXPECT_EQ(PythonLineOf310Table(table, 5, 5), 5);
  EXPECT_EQ(PythonLineOf310Table(table, 5, 6), 8);
  EXPECT_EQ(PythonLineOf310Table(table, 5, 10), -1);
  EXPECT_EQ(PythonLineOf310Table(table, 5, 12), 5);
}

TEST(PythonLineTableTest, Python39Lnotab) {
  // Address 0 line 3; at byte 4 +1 -> 4; at byte 10 +2 -> 6.
  const std::string lnotab("\x04\x01\x06\x02", 4);

  EXPECT_EQ(PythonLineOfLnotab(lnotab, 3, 0), 3);
  EXPECT_EQ(PythonLineOfLnotab(lnotab, 3, 3), 3);
  EXPECT_EQ(PythonLineOfLnotab(lnotab, 3, 4), 4);
  EXPECT_EQ(PythonLineOfLnotab(lnotab, 3, 9), 4);
  EXPECT_EQ(PythonLineOfLnotab(lnotab, 3, 10), 6);
}

}  // namespace
}  // namespace vigil
