// SPDX-License-Identifier: Apache-2.0
#include "snoop/snoop_json.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "snoop/summary_test_util.h"

namespace vigil::snoop {
namespace {

using test_util::Api;
using test_util::Bucket;
using test_util::Copy;
using test_util::Kernel;
using test_util::Leak;
using test_util::SyncAt;

SessionSummary OneProcess() {
  SessionSummary s;
  s.duration_seconds = 2.5;
  s.events_seen = 1234;
  s.processes.resize(1);
  ProcessSummary& p = s.processes[0];
  p.pid = 4242;
  p.command = "train";
  p.libraries = {"/usr/lib/libcudart.so.12"};
  p.launches_total = 30;
  p.launches_by_kernel = {Kernel("gemm_kernel(float*, int)", 20), Kernel("relu", 10)};
  p.graph_launches = 2;
  p.syncs_count = 3;
  p.syncs_seconds = 0.75;
  p.syncs_by_api = {Api("cudaStreamSynchronize", 3, 0.75)};
  DurationBucket bucket;
  bucket.upper_ns = 1 << 28;
  bucket.count = 3;
  p.syncs_by_api[0].histogram = {bucket};
  p.syncs_by_stack = {SyncAt({"step (train)", "main (train)"}, "cudaStreamSynchronize", 3, 0.75)};
  p.memory.allocations = 5;
  p.memory.frees = 3;
  p.memory.outstanding_bytes = 3072;
  p.memory.peak_bytes = 8192;
  p.memory.leaks = {Leak(3072, 2, "cudaMalloc", {"leak_buffers (train)", "main (train)"})};
  p.memory.size_histogram = {Bucket(1024, 1), Bucket(4096, 4)};
  p.memory.mapped_bytes = 2 << 20;
  p.memory.host_outstanding_bytes = 512;
  p.memory.host_peak_bytes = 1024;
  p.memory.by_device = {DeviceMemory{0, 5, 3, 3072, 8192}};
  p.copies = {Copy("HtoD_pageable", 4, 4096), Copy("DtoH", 1, 256)};
  return s;
}

TEST(SnoopJsonTest, WritesTheWholeModelInSchemaOrder) {
  const std::string text = RenderSnoopJson(OneProcess());

  EXPECT_EQ(text, R"json({
  "schema": 1,
  "duration_seconds": 2.5,
  "sampled": false,
  "sample_ratio": 1.0,
  "events_seen": 1234,
  "events_dropped": 0,
  "python_frames": false,
  "warnings": [],
  "processes": [
    {
      "pid": 4242,
      "command": "train",
      "libraries": [
        "/usr/lib/libcudart.so.12"
      ],
      "exited": false,
      "python": null,
      "launches": {
        "total": 30,
        "graph_launches": 2,
        "by_kernel": [
          {
            "name": "gemm_kernel(float*, int)",
            "count": 20
          },
          {
            "name": "relu",
            "count": 10
          }
        ]
      },
      "syncs": {
        "count": 3,
        "seconds": 0.75,
        "by_api": [
          {
            "api": "cudaStreamSynchronize",
            "count": 3,
            "seconds": 0.75,
            "histogram": [
              {
                "upper_ns": 268435456,
                "count": 3
              }
            ]
          }
        ],
        "by_stack": [
          {
            "api": "cudaStreamSynchronize",
            "count": 3,
            "seconds": 0.75,
            "stack": [
              "step (train)",
              "main (train)"
            ]
          }
        ]
      },
      "memory": {
        "allocations": 5,
        "frees": 3,
        "outstanding_bytes": 3072,
        "peak_bytes": 8192,
        "leaks": [
          {
            "bytes": 3072,
            "count": 2,
            "api": "cudaMalloc",
            "stack": [
              "leak_buffers (train)",
              "main (train)"
            ]
          }
        ],
        "size_histogram": [
          {
            "upper_bytes": 1024,
            "count": 1
          },
          {
            "upper_bytes": 4096,
            "count": 4
          }
        ],
        "mapped_bytes": 2097152,
        "host_outstanding_bytes": 512,
        "host_peak_bytes": 1024,
        "by_device": [
          {
            "device": 0,
            "outstanding_bytes": 3072,
            "peak_bytes": 8192,
            "allocations": 5,
            "frees": 3
          }
        ]
      },
      "framework_memory": null,
      "framework_gap_bytes": null,
      "framework_gap_by_device": null,
      "copies": [
        {
          "kind": "HtoD_pageable",
          "count": 4,
          "bytes": 4096
        },
        {
          "kind": "DtoH",
          "count": 1,
          "bytes": 256
        }
      ]
    }
  ]
}
)json");
}

TEST(SnoopJsonTest, FrameworkMemoryAndTheGapToTheDriverView) {
  SessionSummary s = OneProcess();
  ProcessSummary& p = s.processes[0];
  p.has_framework_memory = true;
  p.memory.outstanding_bytes = 64 << 20;
  p.framework_memory.allocations = 7;
  p.framework_memory.outstanding_bytes = 40 << 20;
  p.framework_memory.peak_bytes = 50 << 20;

  nlohmann::json doc = nlohmann::json::parse(RenderSnoopJson(s));

  const nlohmann::json& proc = doc["processes"][0];
  EXPECT_EQ(proc["framework_memory"]["allocations"], 7);
  EXPECT_EQ(proc["framework_memory"]["outstanding_bytes"], 40 << 20);
  EXPECT_EQ(proc["framework_memory"]["peak_bytes"], 50 << 20);
  EXPECT_EQ(proc["framework_gap_bytes"], 24 << 20);
}

TEST(SnoopJsonTest, MemoryAndTheGapPerDevice) {
  SessionSummary s = OneProcess();
  ProcessSummary& p = s.processes[0];
  p.has_framework_memory = true;
  // Driver: 48 MiB on device 0, 16 MiB on device 2; framework: 40 MiB on 0, 1 MiB on 1 (its
  // segments there predate the session), none on 2.
  p.memory.outstanding_bytes = 64 << 20;
  p.memory.by_device = {DeviceMemory{0, 3, 1, 48 << 20, 50 << 20},
                        DeviceMemory{2, 1, 0, 16 << 20, 16 << 20}};
  p.framework_memory.outstanding_bytes = 41 << 20;
  p.framework_memory.by_device = {DeviceMemory{0, 9, 2, 40 << 20, 44 << 20},
                                  DeviceMemory{1, 1, 0, 1 << 20, 1 << 20}};

  nlohmann::json doc = nlohmann::json::parse(RenderSnoopJson(s));

  const nlohmann::json& proc = doc["processes"][0];
  const nlohmann::json& dev = proc["memory"]["by_device"];
  ASSERT_EQ(dev.size(), 2u);
  EXPECT_EQ(dev[0]["device"], 0);
  EXPECT_EQ(dev[0]["outstanding_bytes"], 48 << 20);
  EXPECT_EQ(dev[0]["peak_bytes"], 50 << 20);
  EXPECT_EQ(dev[0]["allocations"], 3);
  EXPECT_EQ(dev[0]["frees"], 1);
  EXPECT_EQ(dev[1]["device"], 2);
  EXPECT_EQ(dev[1]["outstanding_bytes"], 16 << 20);
  const nlohmann::json& fw = proc["framework_memory"]["by_device"];
  ASSERT_EQ(fw.size(), 2u);
  EXPECT_EQ(fw[1]["device"], 1);
  EXPECT_EQ(fw[1]["allocations"], 1);
  EXPECT_EQ(proc["framework_gap_bytes"], 23 << 20);
  EXPECT_EQ(proc["framework_gap_by_device"],
            nlohmann::json::parse(R"([{"device": 0, "bytes": 8388608},
                                      {"device": 1, "bytes": 0},
                                      {"device": 2, "bytes": 16777216}])"));
}

TEST(SnoopJsonTest, SessionFlagsWarningsAndExitedProcesses) {
  SessionSummary s = OneProcess();
  s.sampled = true;
  s.sample_ratio = 0.25;
  s.events_dropped = 17;
  s.python_frames = true;
  s.warnings = {"event budget exceeded: sampling 1 in 4"};
  s.processes[0].exited = true;
  s.processes[0].python = "3.11";
  ProcessSummary other;
  other.pid = 7;
  other.command = "other";
  s.processes.push_back(other);

  nlohmann::json doc = nlohmann::json::parse(RenderSnoopJson(s));

  EXPECT_EQ(doc["sampled"], true);
  EXPECT_EQ(doc["sample_ratio"], 0.25);
  EXPECT_EQ(doc["events_dropped"], 17);
  EXPECT_EQ(doc["python_frames"], true);
  EXPECT_EQ(doc["warnings"], nlohmann::json::array({"event budget exceeded: sampling 1 in 4"}));
  ASSERT_EQ(doc["processes"].size(), 2u);
  EXPECT_EQ(doc["processes"][0]["exited"], true);
  EXPECT_EQ(doc["processes"][0]["python"], "3.11");
  EXPECT_EQ(doc["processes"][1]["python"], nullptr);
  EXPECT_EQ(doc["processes"][1]["pid"], 7);
  EXPECT_EQ(doc["processes"][1]["launches"]["by_kernel"], nlohmann::json::array());
  EXPECT_EQ(doc["processes"][1]["memory"]["leaks"], nlohmann::json::array());
}

TEST(SnoopJsonTest, InvalidUtf8InANameIsReplacedNotFatal) {
  SessionSummary s = OneProcess();
  s.processes[0].launches_by_kernel[0].name = "bad\xff name";

  nlohmann::json doc = nlohmann::json::parse(RenderSnoopJson(s), nullptr, false);

  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["processes"][0]["launches"]["by_kernel"][0]["name"], "bad\xEF\xBF\xBD name");
}

TEST(SnoopJsonTest, WriteSnoopJsonWritesTheFileAndNamesABadPath) {
  char dir[] = "/tmp/snoop-json-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/summary.json";

  ASSERT_TRUE(WriteSnoopJson(OneProcess(), path).ok());
  Status bad = WriteSnoopJson(OneProcess(), std::string(dir) + "/missing/summary.json");

  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), RenderSnoopJson(OneProcess()));
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("missing/summary.json"), std::string::npos) << bad.ToString();
  std::remove(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace vigil::snoop
