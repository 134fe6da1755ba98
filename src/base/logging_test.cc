// SPDX-License-Identifier: Apache-2.0
#include "base/logging.h"

#include <string>

#include <gtest/gtest.h>

#include "base/log_text.h"

namespace vigil {
namespace {

// A client-chosen string meant to forge a second log line, rewrite the current one and colour
// the operator's terminal.
const std::string kHostile = "job-1\n2026-12-01T00:00:00.000 E forged line\rover\x1b[31mred\x7f";

TEST(LoggingTest, ClientStringsCannotForgeLinesOrSendTerminalEscapes) {
  testing::internal::CaptureStderr();
  VIGIL_LOG_WARN("ipc registration refused: job_id={}", kHostile);
  const std::string out = testing::internal::GetCapturedStderr();

  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // One line.
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_EQ(out.find('\x7f'), std::string::npos);
  EXPECT_NE(
      out.find("job_id=job-1\\n2026-12-01T00:00:00.000 E forged line\\rover\\x1b[31mred\\x7f"),
      std::string::npos)
      << out;
}

TEST(LoggingTest, EscapesForJsonLines) {
  EXPECT_EQ(EscapeLogText("a\"b\\c\nd\x1b\te", /*json=*/true), "a\\\"b\\\\c\\nd\\u001b\\te");
  EXPECT_EQ(EscapeLogText("caf\xc3\xa9 \"q\"", /*json=*/false),
            "caf\xc3\xa9 \"q\"");  // UTF-8 kept.
  EXPECT_EQ(EscapeLogText(std::string("nul\0x", 5), /*json=*/false), "nul\\x00x");
}

}  // namespace
}  // namespace vigil
