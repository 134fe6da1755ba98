// SPDX-License-Identifier: Apache-2.0
// Fault injection against the real binaries, with exact accounting: vigil-fleet SIGKILLed (30 s)
// and restarted while vigild keeps pushing, vigild SIGKILLed and restarted on its spool, an
// unwritable state directory and a full one (a small tmpfs, where mount(2) is permitted: CI runs
// as root) where the spool in memory shows as degraded with the bytes at risk, and SIGHUP reloads
// during collections. Each test checks that every sample vigild counted as sent
// was received once, and that nothing was dropped or counted twice.
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/wait_for.h"
#include "fleet_process.h"
#include "vigild_process.h"

namespace vigil::testing {
namespace {

using nlohmann::json;

// The sink called `name` in the daemon's vigilStatus reply (via `vigil status --json`), or null.
json SinkStatus(const VigildProcess& d, const std::string& name) {
  std::string out;
  if (RunVigilCli("status --json --host " + d.rpc_target(), &out) != 0) return json();
  const json status = json::parse(out, nullptr, false);
  if (!status.is_object()) return json();
  for (const json& s : status.value("sinks", json::array())) {
    if (s.value("name", "") == name) return s;
  }
  return json();
}

uint64_t Count(const json& sink, const char* field) {
  return sink.is_object() ? sink.value(field, uint64_t{0}) : 0;
}

// Samples vigil-fleet stored for `host` (duplicates are not counted), or -1 when it is down.
int64_t FleetSamples(const std::string& url, const std::string& host) {
  httplib::Client c(url);
  c.set_connection_timeout(1, 0);
  auto res = c.Get("/api/v1/hosts");
  if (!res || res->status != 200) return -1;
  const json hosts = json::parse(res->body, nullptr, false);
  if (!hosts.is_object()) return -1;
  for (const json& h : hosts.value("hosts", json::array())) {
    if (h.value("host", "") == host) return h.value("samples", int64_t{0});
  }
  return 0;
}

// "fleet sink stopped: sent_samples=N ..." from a daemon's log: its final accounting.
std::map<std::string, uint64_t> StoppedLine(const std::string& log) {
  std::map<std::string, uint64_t> out;
  const size_t at = log.rfind("fleet sink stopped:");
  if (at == std::string::npos) return out;
  const std::string line = log.substr(at, log.find('\n', at) - at);
  for (std::string_view word : Split(line, ' ')) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    out[std::string(word.substr(0, eq))] = ParseUint64(word.substr(eq + 1)).value_or(0);
  }
  return out;
}

size_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

class VigildFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/vigil-fault-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  std::vector<std::string> FleetArgs(const std::string& url, const std::string& state) {
    // Only the daemon's own collectors: a steady, small stream of pushed samples.
    return {"--fleet-url", url,   "--host-name", "fault-host",
            "--state-dir", state, "--interval",  "1s"};
  }
  std::string dir_;
};

TEST_F(VigildFaultTest, FleetAndVigildKilledAndRestartedLoseNothingAndCountNothingTwice) {
  const int port = fleet_test::FreePort();
  fleet_test::FleetProcess fleet(dir_ + "/fleet.db", port);
  ASSERT_TRUE(fleet.Start());
  const std::string state = dir_ + "/state";

  auto first = std::make_unique<VigildProcess>();
  ASSERT_TRUE(first->Spawn(FleetArgs(fleet.url(), state)));
  ASSERT_TRUE(first->WaitHealthy()) << first->Log();
  ASSERT_TRUE(WaitFor([&] { return FleetSamples(fleet.url(), "fault-host") > 0; }, 60,
                      std::chrono::milliseconds(100)))
      << first->Log();

  // The service is down for 30 s, as in the attack trial: vigild keeps collecting and spools
  // what it cannot send.
  fleet.Kill();
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor(
      [&] {
        const json s = SinkStatus(*first, "fleet");
        return s.value("state", "") == "failed" && Count(s, "buffered") >= 2;
      },
      60, std::chrono::milliseconds(100)))
      << first->Log();
  // While the service is down nothing more can be accepted: this count is final.
  const uint64_t sent_first = Count(SinkStatus(*first, "fleet"), "sent_samples");
  EXPECT_GT(sent_first, 0u);

  // vigild dies too, with payloads spooled (its in-memory queue is lost, its spool is not).
  first->Signal(SIGKILL);
  ASSERT_TRUE(first->Wait().has_value());
  first.reset();
  VigildProcess second;
  ASSERT_TRUE(second.Spawn(FleetArgs(fleet.url(), state)));
  ASSERT_TRUE(second.WaitHealthy()) << second.Log();
  ASSERT_TRUE(WaitFor([&] { return Count(SinkStatus(second, "fleet"), "buffered") >= 2; }, 30,
                      std::chrono::milliseconds(100)));

  // The outage's length is the point here, not a condition to wait for.
  std::this_thread::sleep_until(killed + std::chrono::seconds(30));
  // The service comes back on the same port and database; the spool drains.
  ASSERT_TRUE(fleet.Start());
  ASSERT_TRUE(WaitFor(
      [&] {
        const json s = SinkStatus(second, "fleet");
        return s.value("state", "") == "ok" && Count(s, "buffered") == 0 &&
               Count(s, "sent_samples") > 0;
      },
      90, std::chrono::milliseconds(200)))
      << second.Log();

  second.Signal(SIGTERM);  // A clean stop flushes what is queued and logs the final accounting.
  ASSERT_EQ(second.Wait(60), 0) << second.Log();
  const std::map<std::string, uint64_t> last = StoppedLine(second.Log());
  ASSERT_TRUE(last.count("sent_samples")) << second.Log();
  EXPECT_EQ(last.at("dropped_samples"), 0u);
  EXPECT_EQ(last.at("spooled"), 0u);
  // Every sample counted as sent by either daemon was stored exactly once: a payload whose reply
  // was lost in the kill is resent and answered as a duplicate, never stored twice.
  EXPECT_EQ(FleetSamples(fleet.url(), "fault-host"),
            static_cast<int64_t>(sent_first + last.at("sent_samples")))
      << "duplicates resent: " << last.at("duplicate_samples");
}

TEST_F(VigildFaultTest, UnwritableStateDirShowsTheSpoolDegradedWithTheBytesAtRisk) {
  // The state directory's parent is a regular file: the spool cannot be created, even by root.
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/not-a-dir", "").ok());
  const int port = fleet_test::FreePort();
  fleet_test::FleetProcess fleet(dir_ + "/fleet.db", port);
  VigildProcess d;
  ASSERT_TRUE(d.Spawn(FleetArgs(fleet.url(), dir_ + "/not-a-dir/state")));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();

  // The service is down: payloads wait in memory, so the bytes are at risk on a restart.
  json sink;
  ASSERT_TRUE(WaitFor(
      [&] {
        sink = SinkStatus(d, "fleet");
        return Count(sink, "at_risk_bytes") > 0;
      },
      60, std::chrono::milliseconds(100)))
      << sink.dump();
  EXPECT_NE(sink.value("message", "").find("held in memory only"), std::string::npos)
      << sink.dump();
  std::string text;
  ASSERT_EQ(RunVigilCli("status --host " + d.rpc_target(), &text), 0);
  EXPECT_NE(text.find("at risk"), std::string::npos) << text;

  // The service returns: everything is delivered, but the sink stays degraded, not ok, while its
  // spool cannot be written.
  ASSERT_TRUE(fleet.Start());
  ASSERT_TRUE(WaitFor(
      [&] {
        sink = SinkStatus(d, "fleet");
        return sink.value("state", "") == "degraded" && Count(sink, "buffered") == 0;
      },
      90, std::chrono::milliseconds(200)))
      << sink.dump();
  EXPECT_EQ(Count(sink, "dropped_samples"), 0u);
  ASSERT_EQ(RunVigilCli("status --host " + d.rpc_target(), &text), 0);
  EXPECT_NE(text.find("degraded"), std::string::npos) << text;
}

TEST_F(VigildFaultTest, FullDiskUnderTheSpoolKeepsEverySampleAndRecoversWhenSpaceReturns) {
  // A 256 KiB file system as the state dir, filled up: the spool's writes fail with ENOSPC.
  const std::string state = dir_ + "/state";
  ASSERT_EQ(mkdir(state.c_str(), 0700), 0);
  if (mount("tmpfs", state.c_str(), "tmpfs", 0, "size=256k,mode=0700") != 0) {
    GTEST_SKIP() << "mount(tmpfs) not permitted here; the unwritable-state-dir test covers this";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{state};
  ASSERT_TRUE(MakeDirs(state + "/fleet-spool", 0700).ok());
  const std::string filler = state + "/filler";
  {
    const std::string block(4096, 'x');
    FILE* f = fopen(filler.c_str(), "w");
    ASSERT_NE(f, nullptr);
    while (fwrite(block.data(), 1, block.size(), f) == block.size() && fflush(f) == 0) {
    }
    fclose(f);
  }
  const int port = fleet_test::FreePort();
  fleet_test::FleetProcess fleet(dir_ + "/fleet.db", port);
  VigildProcess d;
  ASSERT_TRUE(d.Spawn(FleetArgs(fleet.url(), state)));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  json sink;
  ASSERT_TRUE(WaitFor(
      [&] {
        sink = SinkStatus(d, "fleet");
        return Count(sink, "at_risk_bytes") > 0 && Count(sink, "buffered") >= 2;
      },
      60, std::chrono::milliseconds(100)))
      << sink.dump() << d.Log();
  EXPECT_NE(sink.value("message", "").find("No space left"), std::string::npos) << sink.dump();

  // Space returns and the service comes back: the payloads held in memory are delivered, new
  // ones are spooled on disk again and the sink is ok.
  ASSERT_EQ(unlink(filler.c_str()), 0);
  ASSERT_TRUE(fleet.Start());
  ASSERT_TRUE(WaitFor(
      [&] {
        sink = SinkStatus(d, "fleet");
        return sink.value("state", "") == "ok" && Count(sink, "buffered") == 0 &&
               Count(sink, "at_risk_bytes") == 0;
      },
      90, std::chrono::milliseconds(200)))
      << sink.dump() << d.Log();
  d.Signal(SIGTERM);
  ASSERT_EQ(d.Wait(60), 0) << d.Log();
  const std::map<std::string, uint64_t> last = StoppedLine(d.Log());
  ASSERT_TRUE(last.count("sent_samples")) << d.Log();
  EXPECT_EQ(last.at("dropped_samples"), 0u);
  EXPECT_EQ(FleetSamples(fleet.url(), "fault-host"), static_cast<int64_t>(last.at("sent_samples")));
}

TEST_F(VigildFaultTest, SighupDuringCollectionsLosesAndRepeatsNoSample) {
  const std::string config = dir_ + "/vigild.toml";
  ASSERT_TRUE(WriteFileAtomic(config, "interval = \"200ms\"\n").ok());
  const std::string jsonl = dir_ + "/samples.jsonl";
  VigildProcess d;
  ASSERT_TRUE(d.Spawn({"--config", config, "--jsonl", jsonl}));
  ASSERT_TRUE(d.WaitHealthy()) << d.Log();
  // Each reload is sent the moment a collection's batch reaches the file, so it lands while the
  // scheduler is running collectors and the sink is writing.
  for (int i = 0; i < 25; ++i) {
    const size_t before = FileSize(jsonl);
    ASSERT_TRUE(WaitFor([&] { return FileSize(jsonl) > before; }, 30, std::chrono::milliseconds(1)))
        << d.Log();
    // A real change each time, so each reload reconfigures the scheduler mid-collection.
    ASSERT_TRUE(
        WriteFileAtomic(config, i % 2 == 0 ? "interval = \"300ms\"\n" : "interval = \"200ms\"\n")
            .ok());
    d.Signal(SIGHUP);
    ASSERT_TRUE(d.running()) << d.Log();
  }
  d.Signal(SIGTERM);
  ASSERT_EQ(d.Wait(60), 0) << d.Log();
  EXPECT_NE(d.Log().find("reload: interval"), std::string::npos) << d.Log();

  // Every sample written once: no (series, time) twice, and each collector's ticks advance
  // across the reloads, none repeated.
  const std::string text = ReadSmallFile(jsonl, 256 << 20).value_or("");
  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  std::vector<int64_t> ticks;
  size_t lines = 0;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    const json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    ++lines;
    const std::string name = j["name"];
    const std::string labels = j["labels"].dump();
    const int64_t t = j["time_ns"];
    EXPECT_TRUE(seen.emplace(name, labels, t).second) << "written twice: " << line;
    if (name == "vigil_collector_success" && j["labels"].value("collector", "") == "proc_loadavg") {
      ticks.push_back(t);
    }
  }
  ASSERT_GE(ticks.size(), 5u) << lines;  // Collection went on through the reloads.
  for (size_t i = 1; i < ticks.size(); ++i) {
    EXPECT_GT(ticks[i], ticks[i - 1]) << "tick " << i << " repeated or out of order";
  }
}

}  // namespace
}  // namespace vigil::testing
