// SPDX-License-Identifier: Apache-2.0
#include "base/usage_error.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace vigil {
namespace {

// The parse errors of a small app, as the programs report them.
int Parse(std::vector<std::string> args) {
  CLI::App app{"test", "prog"};
  app.require_subcommand(1);
  app.fallthrough();
  int port = 0;
  app.add_option("--port", port);
  CLI::App* gpu = app.add_subcommand("gpu", "GPU");
  gpu->require_subcommand(1);
  gpu->add_subcommand("pause", "Pause");
  gpu->add_subcommand("resume", "Resume");
  bool json = false;
  app.add_subcommand("status", "Status")->add_flag("--json", json);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e);
  }
  return 0;
}

TEST(UsageErrorTest, EveryUsageErrorExitsTwoAndHelpZero) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(Parse({"stauts"}), 2);
  EXPECT_EQ(Parse({"status", "--jsn"}), 2);
  EXPECT_EQ(Parse({"gpu"}), 2);
  EXPECT_EQ(Parse({"gpu", "pasue"}), 2);
  EXPECT_EQ(Parse({"--port", "x", "status"}), 2);
  EXPECT_EQ(Parse({}), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("prog: unknown command 'stauts'; did you mean 'status'?\n"), std::string::npos)
      << err;
  EXPECT_NE(err.find("prog status: unknown flag '--jsn'; did you mean '--json'?\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("prog gpu: needs a command: pause, resume"), std::string::npos) << err;
  EXPECT_NE(err.find("prog gpu: unknown command 'pasue'; did you mean 'pause'?"), std::string::npos)
      << err;
  EXPECT_NE(err.find("prog: needs a command: gpu, status"), std::string::npos) << err;
  testing::internal::CaptureStdout();
  EXPECT_EQ(Parse({"--help"}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("Subcommands:"), std::string::npos);
}

}  // namespace
}  // namespace vigil
