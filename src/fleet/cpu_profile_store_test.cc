// SPDX-License-Identifier: Apache-2.0
#include "fleet/cpu_profile_store.h"

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "fleet/temp_ledger.h"
#include "profile/folded_output.h"
#include "profile/hot_functions.h"

namespace vigil {
namespace {

using nlohmann::json;
constexpr int64_t kSec = 1000000000;

CpuProfileUpload Window(const std::string& host, int64_t start_s, const std::string& folded,
                        const std::string& job = "J1") {
  return CpuProfileUpload{.job_id = job,
                          .host = host,
                          .start_ns = start_s * kSec,
                          .end_ns = (start_s + 60) * kSec,
                          .received_ns = UnixNanos(),
                          .frequency_hz = 19,
                          .folded = folded};
}

CpuProfileQuery Q(const std::string& job, int64_t since_ns = 0, int64_t until_ns = INT64_MAX,
                  const std::string& host = "", int64_t limit = 100) {
  CpuProfileQuery q;
  q.job_id = job;
  q.host = host;
  q.since_ns = since_ns;
  q.until_ns = until_ns;
  q.limit = limit;
  return q;
}

class CpuProfileStoreTest : public ::testing::Test {
 protected:
  void Store(const CpuProfileUpload& u, size_t keep = 100) {
    StatusOr<CpuProfileStored> s = StoreCpuProfile(*ledger_.store(), u, keep);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_FALSE(s->duplicate);
  }
  StatusOr<CpuProfileRead> Merge(const CpuProfileQuery& q, bool by_host = false) {
    return ledger_.store()->Read<CpuProfileRead>(
        [&](Db& db) { return MergeCpuProfiles(db, q, by_host); });
  }
  json List(const CpuProfileQuery& q) {
    StatusOr<json> j = ledger_.store()->Read<json>([&](Db& db) { return QueryCpuProfiles(db, q); });
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return j.ok() ? *j : json();
  }
  // Two hosts of job J1: host a in two windows, host b in one inside the range and one after.
  void StoreTwoHosts() {
    Store(Window("a", 1000, "train;main;step;matmul 30\ntrain;main;step;load 10\n"));
    Store(Window("a", 1060, "train;main;step;matmul 20\n"));
    Store(Window("b", 1000, "train;main;step;matmul 5\ntrain;main;allreduce 15\n"));
    Store(Window("b", 2000, "train;main;idle 100\n"));
    Store(Window("a", 1000, "other;main 7\n", "J2"));  // Another job: never in J1's merge.
  }

  fleet_test::TempLedger ledger_;
};

TEST_F(CpuProfileStoreTest, MergeAcrossHostsAddsIdenticalStacks) {
  StoreTwoHosts();
  const CpuProfileQuery q = Q("J1", 1000 * kSec, 1200 * kSec);
  StatusOr<CpuProfileRead> m = Merge(q);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // matmul: 30 + 20 (host a) + 5 (host b) = 55; load 10; allreduce 15; idle is after the range.
  EXPECT_EQ(WriteFolded(m->profile),
            "train;main;allreduce 15\ntrain;main;step;load 10\ntrain;main;step;matmul 55\n");
  EXPECT_EQ(m->meta["samples"], 80);
  EXPECT_EQ(m->meta["profiles"], 3);
  EXPECT_EQ(m->meta["profiles_left_out"], 0);
  EXPECT_EQ(m->meta["hosts"], json::parse(R"([{"host":"a","profiles":2,"samples":60},
                                             {"host":"b","profiles":1,"samples":20}])"));
  EXPECT_EQ(m->profile.info().start_unix_ns, 1000 * kSec);
  EXPECT_EQ(m->profile.info().duration_ns, 120 * kSec);
  const std::vector<HotFunction> top = HotFunctions(m->profile, 10);
  ASSERT_GE(top.size(), 5u);  // The process root ("train") is left out.
  EXPECT_EQ(top[0].label, "matmul");
  EXPECT_EQ(top[0].self, 55u);
  EXPECT_EQ(top[1].label, "allreduce");
  EXPECT_EQ(top[1].self, 15u);
  EXPECT_EQ(top[2].label, "load");
  EXPECT_EQ(top[2].self, 10u);
  for (const HotFunction& f : top) {
    EXPECT_NE(f.label, "train");
    if (f.label == "main") {
      EXPECT_EQ(f.total, 80u);
    }
    if (f.label == "step") {
      EXPECT_EQ(f.total, 65u);
    }
  }

  // By host: each host's stacks under its own root.
  StatusOr<CpuProfileRead> split = Merge(q, /*by_host=*/true);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(WriteFolded(split->profile),
            "a;train;main;step;load 10\na;train;main;step;matmul 50\n"
            "b;train;main;allreduce 15\nb;train;main;step;matmul 5\n");
  EXPECT_EQ(split->profile.info().duration_ns, 120 * kSec);

  // Windows that overlap the range: [1060 s, 1120 s) holds only host a's second window.
  StatusOr<CpuProfileRead> second = Merge(Q("J1", 1060 * kSec, 1120 * kSec));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(WriteFolded(second->profile), "train;main;step;matmul 20\n");
  // One host only.
  StatusOr<CpuProfileRead> b = Merge(Q("J1", 0, 1500 * kSec, "b"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->meta["samples"], 20);
  StatusOr<CpuProfileRead> later = Merge(Q("J1", 5000 * kSec));
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->meta["profiles"], 0);
  EXPECT_EQ(later->profile.total_samples(), 0u);
  EXPECT_EQ(Merge(Q("nope"))->meta["samples"], 0);
}

TEST_F(CpuProfileStoreTest, ListAndLoadOneWindow) {
  StoreTwoHosts();
  const json list = List(Q("J1"));
  ASSERT_EQ(list["profiles"].size(), 4u);
  EXPECT_EQ(list["profiles"][0]["host"], "b");  // Newest first.
  EXPECT_EQ(list["profiles"][0]["start_ns"], 2000 * kSec);
  EXPECT_EQ(list["profiles"][0]["samples"], 100);
  EXPECT_EQ(list["profiles"][0]["frequency_hz"], 19);
  EXPECT_EQ(List(Q("J1", 0, INT64_MAX, "a"))["profiles"].size(), 2u);
  EXPECT_EQ(List(Q("J1", 0, INT64_MAX, "", 1))["profiles"].size(), 1u);

  const int64_t id = list["profiles"][3]["id"].get<int64_t>();
  StatusOr<CpuProfileRead> one =
      ledger_.store()->Read<CpuProfileRead>([&](Db& db) { return LoadCpuProfile(db, id); });
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->meta["host"], list["profiles"][3]["host"]);
  EXPECT_EQ(one->profile.total_samples(), list["profiles"][3]["samples"].get<uint64_t>());
  EXPECT_EQ(one->profile.info().frequency_hz, 19);
  StatusOr<CpuProfileRead> none =
      ledger_.store()->Read<CpuProfileRead>([&](Db& db) { return LoadCpuProfile(db, 999); });
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

TEST_F(CpuProfileStoreTest, KeepsAtMostNWindowsPerJobAndHost) {
  for (int i = 0; i < 5; ++i) {
    StatusOr<CpuProfileStored> s =
        StoreCpuProfile(*ledger_.store(), Window("a", 1000 + 60 * i, "p;f 1\n"), 3);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->dropped, i < 3 ? 0 : 1) << i;
  }
  Store(Window("b", 1000, "p;f 1\n"), 3);  // Another host's windows are its own.
  const json a = List(Q("J1", 0, INT64_MAX, "a"));
  ASSERT_EQ(a["profiles"].size(), 3u);
  EXPECT_EQ(a["profiles"][2]["start_ns"], 1120 * kSec);  // The oldest two went.
  EXPECT_EQ(List(Q("J1", 0, INT64_MAX, "b"))["profiles"].size(), 1u);
}

TEST_F(CpuProfileStoreTest, RetentionDropsOldWindows) {
  CpuProfileUpload old = Window("a", 1000, "p;f 1\n");
  old.received_ns = UnixNanos() - 91LL * 86400 * kSec;  // Past the default 90 days.
  Store(old);
  Store(Window("a", 1060, "p;f 2\n"));
  ASSERT_TRUE(ledger_.store()->ApplyRetention(UnixNanos()).ok());
  const json list = List(Q("J1"));
  ASSERT_EQ(list["profiles"].size(), 1u);
  EXPECT_EQ(list["profiles"][0]["samples"], 2);
}

TEST_F(CpuProfileStoreTest, ResendIsStoredOnceAndAConflictIsRefused) {
  const CpuProfileUpload u = Window("a", 1000, "p;f 3\n");
  Store(u);
  StatusOr<CpuProfileStored> again = StoreCpuProfile(*ledger_.store(), u, 10);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(List(Q("J1"))["profiles"].size(), 1u);
  StatusOr<CpuProfileStored> other =
      StoreCpuProfile(*ledger_.store(), Window("a", 1000, "p;g 4\n"), 10);
  EXPECT_EQ(other.status().code(), StatusCode::kAlreadyExists);
}

TEST_F(CpuProfileStoreTest, InvalidUploadsAreRefused) {
  auto bad = [this](CpuProfileUpload u, const std::string& why) {
    StatusOr<CpuProfileStored> s = StoreCpuProfile(*ledger_.store(), u, 10);
    ASSERT_FALSE(s.ok()) << why;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(why), std::string::npos) << s.status().message();
  };
  bad(Window("a", 1000, "p;f 1\n", ""), "job_id");
  bad(Window("a", 1000, "p;f 1\n", "bad\njob"), "job_id");
  bad(Window("", 1000, "p;f 1\n"), "host");
  CpuProfileUpload u = Window("a", 1000, "p;f 1\n");
  u.end_ns = u.start_ns;
  bad(u, "start < end");
  u = Window("a", 1000, "p;f 1\n");
  u.frequency_hz = 0;
  bad(u, "frequency_hz");
  bad(Window("a", 1000, "p;f 1\np;g\n"), "line 2");
  bad(Window("a", 1000, ""), "no samples");
  EXPECT_EQ(List(Q("J1"))["profiles"].size(), 0u);  // Nothing of them was stored.
}

}  // namespace
}  // namespace vigil
