// SPDX-License-Identifier: Apache-2.0
#include "attribution/slurm_job_lookup.h"

#include <gtest/gtest.h>

#include "attribution/scratch_dir.h"

namespace vigil {
namespace {

constexpr int64_t kSec = 1'000'000'000;

// The layout of `scontrol listpids` (slurmd's view of the processes of its jobs on this node).
constexpr char kListpids[] =
    "PID      JOBID    STEPID   LOCALID GLOBALID\n"
    "900      4321     0        0       0\n"
    "911      4321     batch    -       -\n"
    "-1       4321     extern   -       -\n"
    "912      77_3     0        0       0\n"
    "bogus line\n"
    "913      4322+1   0        0       0\n";

TEST(SlurmJobLookupTest, ParsesListpidsByItsHeader) {
  std::map<std::string, std::string> sluids;
  std::map<int, std::string> pids = ParseScontrolListpids(kListpids, &sluids);

  EXPECT_EQ(pids, (std::map<int, std::string>{
                      {900, "4321"}, {911, "4321"}, {912, "77_3"}, {913, "4322+1"}}));
  EXPECT_TRUE(sluids.empty());
}

TEST(SlurmJobLookupTest, ASluidColumnWhereTheOutputHasOneIsUsed) {
  std::map<std::string, std::string> sluids;
  ParseScontrolListpids(
      "PID JOBID SLUID STEPID\n"
      "900 4321 sEKNKTV3WPV500 0\n",
      &sluids);

  EXPECT_EQ(sluids, (std::map<std::string, std::string>{{"sEKNKTV3WPV500", "4321"}}));
}

TEST(SlurmJobLookupTest, TextWithoutTheHeaderGivesNothing) {
  EXPECT_TRUE(ParseScontrolListpids("900 4321 0 0 0\n", nullptr).empty());
  EXPECT_TRUE(ParseScontrolListpids("", nullptr).empty());
}

struct FakeScontrol {
  ScratchDir dir;
  std::string path;
  int64_t now = 1000 * kSec;

  explicit FakeScontrol(const std::string& listing) {
    dir.Write("listing", listing);
    path = dir.Write("scontrol",
                     "#!/bin/sh\n"
                     "here=$(dirname \"$0\")\n"
                     "echo \"$*\" >> \"$here/calls\"\n"
                     "[ \"$1\" = listpids ] || exit 2\n"
                     "cat \"$here/listing\"\n",
                     true);
  }
  int Calls() const {
    std::ifstream in(dir.Sub("calls"));
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line == "listpids";
    return n;
  }
  SlurmJobLookupOptions Options() {
    SlurmJobLookupOptions o;
    o.scontrol = path;
    o.call_deadline_ns = 30 * kSec;
    o.monotonic_ns = [this] { return now; };
    return o;
  }
};

TEST(SlurmJobLookupTest, AsksScontrolOnceAndRemembersTheSluid) {
  FakeScontrol fake(kListpids);
  SlurmJobLookup lookup(fake.Options());

  EXPECT_EQ(lookup.JobId("sEKNKTV3WPV500", 900), "4321");
  EXPECT_EQ(lookup.JobId("sEKNKTV3WPV500", 0), "4321");  // Learnt: no pid needed now.
  EXPECT_EQ(lookup.JobId("sEKNKTV3WPV500", 911), "4321");
  EXPECT_EQ(fake.Calls(), 1);
  EXPECT_TRUE(lookup.health().scontrol_ok);
  EXPECT_EQ(lookup.health().known_jobs, 1u);
}

TEST(SlurmJobLookupTest, AnUnknownPidAsksAgainOnlyAfterTheMinimumInterval) {
  FakeScontrol fake(kListpids);
  SlurmJobLookup lookup(fake.Options());

  EXPECT_EQ(lookup.JobId("sFNDM35NQ39R00", 999), std::nullopt);
  EXPECT_EQ(lookup.JobId("sFNDM35NQ39R00", 999), std::nullopt);
  EXPECT_EQ(fake.Calls(), 1);
  fake.now += 6 * kSec;
  EXPECT_EQ(lookup.JobId("sFNDM35NQ39R00", 999), std::nullopt);
  EXPECT_EQ(fake.Calls(), 2);
}

TEST(SlurmJobLookupTest, AJobIdBoundToOneSluidIsNotGivenToAnother) {
  SlurmJobLookupOptions o;
  o.scontrol = "";
  SlurmJobLookup lookup(o);

  EXPECT_TRUE(lookup.Learn("sEKNKTV3WPV500", "4321"));
  EXPECT_FALSE(lookup.Learn("sQ7W3ZJ0M2K8P0", "4321"));
  EXPECT_FALSE(lookup.Learn("sEKNKTV3WPV500", "9999"));  // The first word stands.
  EXPECT_FALSE(lookup.Learn("sAAAAAAAAAAAAA", "not-a-number"));
  EXPECT_EQ(lookup.JobId("sEKNKTV3WPV500", 0), "4321");
}

TEST(SlurmJobLookupTest, AFailingScontrolIsReported) {
  ScratchDir dir;
  SlurmJobLookupOptions o;
  o.scontrol = dir.Write("scontrol", "#!/bin/sh\necho 'slurm_load_node error' >&2\nexit 1\n", true);
  SlurmJobLookup lookup(o);

  EXPECT_EQ(lookup.JobId("sEKNKTV3WPV500", 900), std::nullopt);

  EXPECT_TRUE(lookup.health().used);
  EXPECT_FALSE(lookup.health().scontrol_ok);
  EXPECT_NE(lookup.health().message.find("exited with status 1"), std::string::npos);
}

}  // namespace
}  // namespace vigil
