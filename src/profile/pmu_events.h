// SPDX-License-Identifier: Apache-2.0
// The CPU performance-counter event model: what this host has (CPU vendor from <proc>/cpuinfo,
// the event sources under <sys>/bus/event_source/devices with their type, cpumask and format
// files), perf's generic event names, sysfs-described and raw events ("cpu/event=0x3c,umask=0x0/",
// "uncore_imc_0/cas_count_read/"), and the named presets the perf_pmu collector opens. Only reads
// files; nothing is opened with perf_event_open here (pmu_counters.h does that).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace vigil {

enum class CpuVendor { kUnknown, kIntel, kAmd, kArm };
std::string_view CpuVendorName(CpuVendor vendor);  // "intel", "amd", "arm", "unknown"

// One field of a PMU's format directory: "config:0-7,32-35" places a field's bits, low bits first,
// into the ranges in order.
struct PmuFormatField {
  std::string name;                             // "event", "umask", "cmask", ...
  int word = 0;                                 // 0: attr.config, 1: config1, 2: config2.
  std::vector<std::pair<int, int>> bit_ranges;  // Inclusive [lo, hi], in the order given.
};

// Parses a format file's text ("config:0-7,21\n"). InvalidArgument on anything else.
StatusOr<PmuFormatField> ParsePmuFormat(std::string_view name, std::string_view text);

// One event source (a directory of <sys>/bus/event_source/devices).
struct PmuDevice {
  std::string name;       // "cpu", "software", "uncore_imc_0", "amd_df", "armv8_pmuv3_0"
  std::string dir;        // Its sysfs directory (for events/ lookups).
  uint32_t type = 0;      // perf_event_attr.type, from <dir>/type.
  std::vector<int> cpus;  // <dir>/cpumask: the CPUs to open an uncore PMU on; empty = every CPU.
  std::vector<PmuFormatField> format;
};

struct PmuHost {
  CpuVendor vendor = CpuVendor::kUnknown;
  int cpu_family = -1;  // x86 "cpu family" (AMD Zen generations differ in their DF events).
  int cpu_model = -1;   // x86 "model".
  std::vector<int> online_cpus;    // <sys>/devices/system/cpu/online; from cpuinfo if missing.
  std::vector<PmuDevice> devices;  // Sorted by name.

  const PmuDevice* Find(std::string_view name) const;
  // The core PMU that serves PERF_TYPE_HARDWARE and PERF_TYPE_HW_CACHE events ("cpu" on x86,
  // "armv8_*"/"arm_*" on ARM), or null where there is none (most VMs).
  const PmuDevice* CorePmu() const;
  // Names of every event source, comma-separated, for messages.
  std::string DeviceNames() const;
};

// Reads the vendor, online CPUs and event sources. NotFound when the event_source directory is
// missing (a kernel without perf events); an unreadable device is skipped.
StatusOr<PmuHost> DetectPmuHost(std::string_view proc_root, std::string_view sys_root);
// Vendor, family and model from cpuinfo text.
void ParseCpuInfo(std::string_view text, PmuHost* host);
// "0-3,8,10-11" (cpumask, online) -> {0,1,2,3,8,10,11}. InvalidArgument when malformed or above
// 4096 CPUs.
StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// What an event counts, so the collector can name the metric.
enum class PmuEventScope {
  kCpu,     // Per CPU (and per cgroup): core hardware and software events.
  kUncore,  // Per socket/die, opened on the PMU's cpumask CPUs, system-wide only.
};

struct PmuEvent {
  std::string name;  // As configured: "instructions", "cpu/event=0x3c/", "amd_df/...".
  std::string pmu;   // Source device: "cpu", "software", "uncore_imc_0", ...
  // What it counts, for naming its metric: perf's generic name ("cycles" for "cpu-cycles"),
  // "memory-read" / "memory-write" (IMC CAS counts), "memory-data" (AMD DF), "" for others.
  std::string kind;
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  PmuEventScope scope = PmuEventScope::kCpu;
  bool hardware = false;  // Needs a hardware PMU (false for software events).
  double scale = 1;       // Multiply counts by this (uncore .scale/.unit to bytes: 64).
  std::vector<int> cpus;  // kUncore: where to open it (the PMU's cpumask).
};

// perf's generic names (perf list): hardware ("instructions", "cycles", "cache-misses", ...),
// software ("task-clock", "context-switches", "cpu-migrations", "page-faults", "minor-faults",
// "major-faults", ...) and hardware-cache ("L1-dcache-load-misses", "dTLB-load-misses",
// "LLC-load-misses", ...). nullopt for other names.
std::optional<PmuEvent> GenericPmuEvent(std::string_view name);

// Resolves one event: a generic name, "pmu/term=value,.../" (terms from the PMU's format files,
// or a named event from its events directory, as in "cpu/cache-misses/" or
// "uncore_imc_0/cas_count_read/"), or a raw "rNNNN" for the core PMU. NotFound when the PMU or
// the named event does not exist here, InvalidArgument when the text is malformed.
StatusOr<PmuEvent> ResolvePmuEvent(const PmuHost& host, std::string_view spec);

// Named presets:
//   default   instructions, cycles, cache-references, cache-misses (LLC), L1-dcache-load-misses,
//             dTLB-load-misses, branch-misses, plus the memory preset where it resolves
//   software  task-clock, context-switches, cpu-migrations, minor-faults, major-faults
//   memory    DRAM traffic: Intel IMC cas_count_read/write on every uncore_imc_N, AMD DF DRAM
//             channel data (Zen 1-3) on amd_df; nothing on other hosts
// The event names each preset expands to on `host`.
std::vector<std::string> PresetEventNames(const PmuHost& host, std::string_view preset);
bool IsPmuPreset(std::string_view name);

// Splits a configured list on commas outside "pmu/.../" ("default,cpu/event=0x3c,umask=0/").
std::vector<std::string> SplitPmuEventList(std::string_view list);

struct PmuEventSelection {
  std::vector<PmuEvent> events;  // What to open, in order, without duplicates.
  // Events of the list that cannot be counted here, with the reason ("instructions: no hardware
  // PMU"). A preset's events that need a PMU this host lacks are reported once, by preset.
  std::vector<std::string> unavailable;
};

// Expands presets and resolves every name of `list`. Hardware events are dropped (and listed in
// `unavailable`) when the host has no core PMU. InvalidArgument for a malformed or unknown name.
StatusOr<PmuEventSelection> SelectPmuEvents(const PmuHost& host, std::string_view list);

}  // namespace vigil
