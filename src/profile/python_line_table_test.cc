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

}  // namespace
}  // namespace vigil
