// SPDX-License-Identifier: Apache-2.0
#include "profile/pmu_events.h"

#include <linux/perf_event.h>

#include <gtest/gtest.h>

namespace vigil {
namespace {

std::string Fixture(std::string_view host) {
  return std::string(VIGIL_TEST_DATA_DIR) + "/pmu/" + std::string(host);
}

PmuHost Detect(std::string_view host) {
  StatusOr<PmuHost> h = DetectPmuHost(Fixture(host) + "/proc", Fixture(host) + "/sys");
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  return h.ok() ? *h : PmuHost{};
}

TEST(PmuFormatTest, ParsesSplitBitRanges) {
  StatusOr<PmuFormatField> f = ParsePmuFormat("event", "config:0-7,32-35\n");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->word, 0);
  ASSERT_EQ(f->bit_ranges.size(), 2u);
  EXPECT_EQ(f->bit_ranges[0], (std::pair<int, int>{0, 7}));
  EXPECT_EQ(f->bit_ranges[1], (std::pair<int, int>{32, 35}));

  StatusOr<PmuFormatField> flag = ParsePmuFormat("edge", "config:18");
  ASSERT_TRUE(flag.ok());
  EXPECT_EQ(flag->bit_ranges[0], (std::pair<int, int>{18, 18}));
  StatusOr<PmuFormatField> word1 = ParsePmuFormat("offcore_rsp", "config1:0-63");
  ASSERT_TRUE(word1.ok());
  EXPECT_EQ(word1->word, 1);
}

TEST(PmuFormatTest, RefusesMalformedFormats) {
  EXPECT_EQ(ParsePmuFormat("e", "config0-7").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePmuFormat("e", "config3:0-7").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePmuFormat("e", "config:7-0").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePmuFormat("e", "config:0-64").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePmuFormat("e", "config:").status().code(), StatusCode::kInvalidArgument);
}

TEST(PmuCpuListTest, ExpandsRangesAndRefusesJunk) {
  StatusOr<std::vector<int>> cpus = ParseCpuList("0-2,8,10-11\n");
  ASSERT_TRUE(cpus.ok());
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 8, 10, 11}));
  EXPECT_TRUE(ParseCpuList("")->empty());
  EXPECT_FALSE(ParseCpuList("3-1").ok());
  EXPECT_FALSE(ParseCpuList("0-99999").ok());
  EXPECT_FALSE(ParseCpuList("x").ok());
}

TEST(PmuHostTest, DetectsAnIntelHostWithItsUncoreMemoryControllers) {
  const PmuHost host = Detect("intel_host");
  EXPECT_EQ(host.vendor, CpuVendor::kIntel);
  EXPECT_EQ(host.cpu_family, 6);
  EXPECT_EQ(host.cpu_model, 85);
  EXPECT_EQ(host.online_cpus, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_NE(host.CorePmu(), nullptr);
  EXPECT_EQ(host.CorePmu()->name, "cpu");
  EXPECT_EQ(host.CorePmu()->type, 4u);
  EXPECT_TRUE(host.CorePmu()->cpus.empty());
  const PmuDevice* imc = host.Find("uncore_imc_1");
  ASSERT_NE(imc, nullptr);
  EXPECT_EQ(imc->type, 15u);
  EXPECT_EQ(imc->cpus, (std::vector<int>{0, 2}));  // One CPU per socket.
  EXPECT_EQ(host.DeviceNames(),
            "breakpoint, cpu, kprobe, msr, power, software, tracepoint, uncore_cha_0, "
            "uncore_imc_0, uncore_imc_1, uprobe");
}

TEST(PmuHostTest, DetectsAnAmdZen3Host) {
  const PmuHost host = Detect("amd_host");
  EXPECT_EQ(host.vendor, CpuVendor::kAmd);
  EXPECT_EQ(host.cpu_family, 25);
  EXPECT_EQ(host.cpu_model, 1);
  ASSERT_NE(host.CorePmu(), nullptr);
  ASSERT_NE(host.Find("amd_df"), nullptr);
  EXPECT_EQ(host.Find("amd_df")->cpus, (std::vector<int>{0}));
}

TEST(PmuHostTest, AVmWithoutAHardwarePmuHasNoCorePmu) {
  const PmuHost host = Detect("vm_host");
  EXPECT_EQ(host.vendor, CpuVendor::kIntel);
  EXPECT_EQ(host.CorePmu(), nullptr);
  EXPECT_EQ(host.DeviceNames(), "breakpoint, msr, software, tracepoint, uprobe");
}

TEST(PmuHostTest, ArmCpuinfoHasNoVendorIdButAnImplementer) {
  PmuHost host;
  ParseCpuInfo(
      "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n\n"
      "processor\t: 1\nCPU implementer\t: 0x41\n",
      &host);
  EXPECT_EQ(host.vendor, CpuVendor::kArm);
  EXPECT_EQ(host.online_cpus, (std::vector<int>{0, 1}));
}

TEST(PmuHostTest, MissingEventSourcesAreNotFound) {
  StatusOr<PmuHost> host = DetectPmuHost("/nonexistent/proc", "/nonexistent/sys");
  EXPECT_EQ(host.status().code(), StatusCode::kNotFound);
}

TEST(PmuEventTest, GenericNamesMapToPerfTypesAndConfigs) {
  struct Case {
    std::string_view name;
    uint32_t type;
    uint64_t config;
    std::string_view kind;
  };
  const Case cases[] = {
      {"instructions", PERF_TYPE_HARDWARE, 1, "instructions"},
      {"cpu-cycles", PERF_TYPE_HARDWARE, 0, "cycles"},
      {"cache-misses", PERF_TYPE_HARDWARE, 3, "cache-misses"},
      {"branch-misses", PERF_TYPE_HARDWARE, 5, "branch-misses"},
      {"ref-cycles", PERF_TYPE_HARDWARE, 9, "ref-cycles"},
      {"task-clock", PERF_TYPE_SOFTWARE, 1, "task-clock"},
      {"cs", PERF_TYPE_SOFTWARE, 3, "context-switches"},
      {"migrations", PERF_TYPE_SOFTWARE, 4, "cpu-migrations"},
      {"major-faults", PERF_TYPE_SOFTWARE, 6, "major-faults"},
      // Hardware cache: id | op << 8 | result << 16.
      {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0x10000, "L1-dcache-load-misses"},
      {"L1-dcache-loads", PERF_TYPE_HW_CACHE, 0x0, "L1-dcache-loads"},
      {"LLC-store-misses", PERF_TYPE_HW_CACHE, 0x10102, "LLC-store-misses"},
      {"dTLB-load-misses", PERF_TYPE_HW_CACHE, 0x10003, "dTLB-load-misses"},
      {"iTLB-load-misses", PERF_TYPE_HW_CACHE, 0x10004, "iTLB-load-misses"},
      {"L1-dcache-prefetches", PERF_TYPE_HW_CACHE, 0x200, "L1-dcache-prefetches"},
      {"node-load-misses", PERF_TYPE_HW_CACHE, 0x10006, "node-load-misses"},
  };
  for (const Case& c : cases) {
    std::optional<PmuEvent> e = GenericPmuEvent(c.name);
    ASSERT_TRUE(e.has_value()) << c.name;
    EXPECT_EQ(e->type, c.type) << c.name;
    EXPECT_EQ(e->config, c.config) << c.name;
    EXPECT_EQ(e->kind, c.kind) << c.name;
    EXPECT_EQ(e->hardware, c.type != PERF_TYPE_SOFTWARE) << c.name;
  }
  EXPECT_FALSE(GenericPmuEvent("L1-dcache-loadz").has_value());
  EXPECT_FALSE(GenericPmuEvent("LLC").has_value());
  EXPECT_FALSE(GenericPmuEvent("instruction").has_value());
}

TEST(PmuEventTest, SysfsTermsArePlacedByTheFormatFiles) {
  const PmuHost intel = Detect("intel_host");
  StatusOr<PmuEvent> e = ResolvePmuEvent(intel, "cpu/event=0x3c,umask=0x01,cmask=2,inv/");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->type, 4u);
  EXPECT_EQ(e->config, 0x3c | 0x01 << 8 | 2u << 24 | 1u << 23);
  EXPECT_EQ(e->scope, PmuEventScope::kCpu);
  EXPECT_TRUE(e->hardware);

  // offcore_rsp lives in config1.
  e = ResolvePmuEvent(intel, "cpu/event=0xb7,umask=0x01,offcore_rsp=0x3fbfc00001/");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->config, 0x01b7u);
  EXPECT_EQ(e->config1, 0x3fbfc00001u);

  // A named event from cpu/events.
  e = ResolvePmuEvent(intel, "cpu/cache-misses/");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->config, 0x412eu);

  // AMD's event field is split: bits 8-11 of the event code go to config bits 32-35.
  const PmuHost amd = Detect("amd_host");
  e = ResolvePmuEvent(amd, "amd_df/event=0x1c7,umask=0x38/");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->type, 11u);
  EXPECT_EQ(e->config, 0x1000038c7u);
  EXPECT_EQ(e->scope, PmuEventScope::kUncore);
  EXPECT_EQ(e->cpus, (std::vector<int>{0}));
}

TEST(PmuEventTest, ImcCasCountsAreBytesThroughScaleAndUnit) {
  const PmuHost intel = Detect("intel_host");
  StatusOr<PmuEvent> e = ResolvePmuEvent(intel, "uncore_imc_0/cas_count_write/");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->type, 14u);
  EXPECT_EQ(e->config, 0x0c04u);
  EXPECT_EQ(e->scale, 64.0);  // 6.103515625e-5 MiB = 64 bytes per CAS.
  EXPECT_EQ(e->kind, "memory-write");
  EXPECT_EQ(e->scope, PmuEventScope::kUncore);
  EXPECT_EQ(e->cpus, (std::vector<int>{0, 2}));
}

TEST(PmuEventTest, RawEventsUseTheCorePmu) {
  const PmuHost intel = Detect("intel_host");
  StatusOr<PmuEvent> e = ResolvePmuEvent(intel, "r412e");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->type, static_cast<uint32_t>(PERF_TYPE_RAW));
  EXPECT_EQ(e->config, 0x412eu);
}

TEST(PmuEventTest, BadEventsSayWhatIsWrong) {
  const PmuHost intel = Detect("intel_host");
  StatusOr<PmuEvent> e = ResolvePmuEvent(intel, "cpu/nosuch=1/");
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("no format field 'nosuch'"), std::string::npos);
  e = ResolvePmuEvent(intel, "cpu/event=0x1ff/");  // Intel's event field is 8 bits.
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("does not fit the 8 bits of 'event'"), std::string::npos);
  EXPECT_EQ(ResolvePmuEvent(intel, "amd_df/event=0x7/").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ResolvePmuEvent(intel, "cpu/no-such-event/").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ResolvePmuEvent(intel, "cpu/event=0x3c").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolvePmuEvent(intel, "cpu/event=zz/").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolvePmuEvent(intel, "frobnications").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolvePmuEvent(intel, "").status().code(), StatusCode::kInvalidArgument);
}

TEST(PmuEventTest, ListsSplitOnCommasOutsidePmuTerms) {
  EXPECT_EQ(SplitPmuEventList("default, cpu/event=0x3c,umask=0/ ,cs,,"),
            (std::vector<std::string>{"default", "cpu/event=0x3c,umask=0/", "cs"}));
  EXPECT_TRUE(SplitPmuEventList(" , ").empty());
}

TEST(PmuPresetTest, MemoryPresetFollowsThePmusTheHostHas) {
  const PmuHost intel = Detect("intel_host");
  EXPECT_EQ(
      PresetEventNames(intel, "memory"),
      (std::vector<std::string>{"uncore_imc_0/cas_count_read/", "uncore_imc_0/cas_count_write/",
                                "uncore_imc_1/cas_count_read/", "uncore_imc_1/cas_count_write/"}));
  PmuHost amd = Detect("amd_host");
  EXPECT_EQ(PresetEventNames(amd, "memory").size(), 8u);
  EXPECT_EQ(PresetEventNames(amd, "memory")[4], "amd_df/event=0x107,umask=0x38/");
  amd.cpu_model = 0x11;  // Zen 4 encodes its DF events differently: none rather than wrong ones.
  EXPECT_TRUE(PresetEventNames(amd, "memory").empty());
  EXPECT_TRUE(PresetEventNames(Detect("vm_host"), "memory").empty());
  EXPECT_EQ(PresetEventNames(intel, "software"),
            (std::vector<std::string>{"task-clock", "context-switches", "cpu-migrations",
                                      "minor-faults", "major-faults"}));
  EXPECT_EQ(PresetEventNames(intel, "default").size(), 11u);  // 7 core + 4 IMC.
  EXPECT_TRUE(PresetEventNames(intel, "nosuch").empty());
}

TEST(PmuSelectionTest, WithoutAHardwarePmuOnlySoftwareEventsRemain) {
  const PmuHost vm = Detect("vm_host");
  StatusOr<PmuEventSelection> sel = SelectPmuEvents(vm, "default,software,instructions,cs");
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  std::vector<std::string> names;
  for (const PmuEvent& e : sel->events) {
    names.push_back(e.name);
    EXPECT_FALSE(e.hardware);
  }
  // "cs" is context-switches again: counted once.
  EXPECT_EQ(names, (std::vector<std::string>{"task-clock", "context-switches", "cpu-migrations",
                                             "minor-faults", "major-faults"}));
  EXPECT_EQ(sel->unavailable,
            (std::vector<std::string>{
                "preset default (instructions, cycles, cache-references, cache-misses, "
                "L1-dcache-load-misses, dTLB-load-misses, branch-misses): no hardware PMU",
                "instructions: no hardware PMU"}));
}

TEST(PmuSelectionTest, OnAnAmdHostTheDefaultPresetAddsDataFabricEvents) {
  StatusOr<PmuEventSelection> sel = SelectPmuEvents(Detect("amd_host"), "default");
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  ASSERT_EQ(sel->events.size(), 15u);
  EXPECT_TRUE(sel->unavailable.empty());
  EXPECT_EQ(sel->events[7].kind, "memory-data");
  EXPECT_EQ(sel->events[7].scale, 64.0);
  EXPECT_EQ(sel->events[0].pmu, "cpu");
}

TEST(PmuSelectionTest, UnknownNamesAreErrorsAndMissingPmusAreUnavailable) {
  const PmuHost intel = Detect("intel_host");
  EXPECT_EQ(SelectPmuEvents(intel, "default,bogus").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SelectPmuEvents(intel, "").status().code(), StatusCode::kInvalidArgument);
  StatusOr<PmuEventSelection> sel = SelectPmuEvents(intel, "cycles,amd_df/event=0x7/");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->events.size(), 1u);
  ASSERT_EQ(sel->unavailable.size(), 1u);
  EXPECT_EQ(sel->unavailable[0], "amd_df/event=0x7/: no PMU 'amd_df' on this host");
}

}  // namespace
}  // namespace vigil
