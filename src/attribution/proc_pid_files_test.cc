// SPDX-License-Identifier: Apache-2.0
#include "attribution/proc_pid_files.h"

#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

using namespace std::string_literals;  // NOLINT(google-build-using-namespace): "\0"s literals.

constexpr char kStat[] =
    "8958 (my (odd) comm) R 8956 8956 3913 0 -1 4194304 99 0 0 0 7 3 0 0 20 0 4 0 50040 3133440 "
    "417 18446744073709551615 94228049641472 94228049661353 140730372308368 0 0 0 0 0 0 0 0 0 17 "
    "0 0 0 0 0 0\n";

TEST(ProcPidFilesTest, ParsesStatWithParenthesesInComm) {
  std::optional<ProcStat> s = ParseProcStat(kStat);

  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->pid, 8958);
  EXPECT_EQ(s->comm, "my (odd) comm");
  EXPECT_EQ(s->state, 'R');
  EXPECT_EQ(s->ppid, 8956);
  EXPECT_EQ(s->utime_ticks, 7u);
  EXPECT_EQ(s->stime_ticks, 3u);
  EXPECT_EQ(s->num_threads, 4);
  EXPECT_EQ(s->starttime_ticks, 50040u);
  EXPECT_EQ(s->rss_pages, 417);
}

TEST(ProcPidFilesTest, RejectsTruncatedStat) {
  EXPECT_FALSE(ParseProcStat("12 (x) S 1 2 3").has_value());
  EXPECT_FALSE(ParseProcStat("").has_value());
  EXPECT_FALSE(
      ParseProcStat("abc (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 1 2 3").has_value());
}

TEST(ProcPidFilesTest, ParsesStatusUidPpidRss) {
  ProcStatus s = ParseProcStatus(
      "Name:\tpython3\nPPid:\t700\nUid:\t4242\t4243\t4242\t4242\nVmRSS:\t  4000 kB\n"
      "Threads:\t12\n");

  EXPECT_EQ(s.name, "python3");
  EXPECT_EQ(s.ppid, 700);
  EXPECT_EQ(s.uid, 4242);
  EXPECT_EQ(s.vm_rss, 4000 * 1024);
  EXPECT_EQ(s.threads, 12);
}

TEST(ProcPidFilesTest, KernelThreadStatusHasNoRss) {
  ProcStatus s = ParseProcStatus("Name:\tkthreadd\nPPid:\t0\nUid:\t0\t0\t0\t0\n");

  EXPECT_EQ(s.vm_rss, -1);
  EXPECT_EQ(s.uid, 0);
}

TEST(ProcPidFilesTest, EnvironKeepsOnlyAllowListedVariables) {
  const std::string environ =
      "PATH=/usr/bin\0SLURM_JOB_ID=1234\0SECRET=hunter2\0VIGIL_TEAM=a=b\0NOEQUALS\0=x\0"
      "SLURM_JOB_ID=second\0"s;

  std::map<std::string, std::string> env =
      ParseEnviron(environ, {"SLURM_JOB_ID", "VIGIL_TEAM", "NOEQUALS"});

  EXPECT_EQ(env.size(), 2u);
  EXPECT_EQ(env["SLURM_JOB_ID"], "1234");  // The first of a repeated key, as getenv().
  EXPECT_EQ(env["VIGIL_TEAM"], "a=b");     // Only the first '=' separates.
  EXPECT_EQ(env.count("SECRET"), 0u);
}

TEST(ProcPidFilesTest, EmptyAllowListReadsNothing) {
  EXPECT_TRUE(ParseEnviron("SLURM_JOB_ID=1\0"s, {}).empty());
}

TEST(ProcPidFilesTest, CmdlineNulsBecomeSpaces) {
  EXPECT_EQ(CmdlineToString("python3\0-m\0torch.distributed.run\0"s),
            "python3 -m torch.distributed.run");
  EXPECT_EQ(CmdlineToString(""), "");
}

// Found by fuzz/proc_pid_fuzzer: a VmRSS beyond int64 in bytes was multiplied anyway (signed
// overflow, undefined behaviour under UBSan).
TEST(ProcPidFilesTest, ImpossibleRssIsUnknown) {
  EXPECT_EQ(ParseProcStatus("VmRSS:\t-9223372036854775808 kB\n").vm_rss, -1);
  EXPECT_EQ(ParseProcStatus("VmRSS:\t9223372036854775807 kB\n").vm_rss, -1);
  EXPECT_EQ(ParseProcStatus("VmRSS:\t-4 kB\n").vm_rss, -1);
  EXPECT_EQ(ParseProcStatus("VmRSS:\t4 kB\n").vm_rss, 4096);
}

}  // namespace
}  // namespace vigil
