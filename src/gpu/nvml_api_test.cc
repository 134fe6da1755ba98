// SPDX-License-Identifier: Apache-2.0
#include "gpu/nvml_api.h"

#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

nvml::Return Ok() { return nvml::kSuccess; }
int g_marker = 0;

// A symbol table: every name present maps to some non-null address.
struct Symbols {
  std::set<std::string> names;
  static void* Lookup(void* ctx, const char* name) {
    auto* self = static_cast<Symbols*>(ctx);
    if (!self->names.count(name)) return nullptr;
    if (std::string(name).starts_with("nvmlInit")) return reinterpret_cast<void*>(&Ok);
    return &g_marker;
  }
};

std::string Resolved(const NvmlApi& api, const std::string& slot) {
  for (const auto& [s, sym] : api.resolved) {
    if (s == slot) return sym;
  }
  return "<no slot>";
}

const std::set<std::string> kRequired = {"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2",
                                         "nvmlDeviceGetHandleByIndex_v2"};

TEST(ResolveNvmlApiTest, MissingRequiredSymbolFailsNamingIt) {
  Symbols syms{{"nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2"}};
  NvmlApi api;
  Status s = ResolveNvmlApi(&Symbols::Lookup, &syms, &api);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("nvmlDeviceGetHandleByIndex_v2"), std::string::npos);
}

TEST(ResolveNvmlApiTest, OldDriverFallsBackToOlderSymbolsAndLeavesCapabilitiesAbsent) {
  Symbols syms{{"nvmlInit", "nvmlShutdown", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
                "nvmlDeviceGetCurrentClocksThrottleReasons", "nvmlDeviceGetComputeRunningProcesses",
                "nvmlDeviceGetMemoryInfo"}};
  NvmlApi api;
  ASSERT_TRUE(ResolveNvmlApi(&Symbols::Lookup, &syms, &api).ok());
  EXPECT_EQ(Resolved(api, "nvmlInit_v2"), "nvmlInit");
  EXPECT_EQ(Resolved(api, "nvmlDeviceGetCurrentClocksEventReasons"),
            "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_NE(api.device_get_clocks_event_reasons, nullptr);
  EXPECT_EQ(Resolved(api, "nvmlDeviceGetComputeRunningProcesses_v3"),
            "nvmlDeviceGetComputeRunningProcesses");
  EXPECT_EQ(api.process_info_size, 16u);
  EXPECT_EQ(api.device_get_memory_info_v2, nullptr);
  EXPECT_EQ(api.gpm_metrics_get, nullptr);
  EXPECT_EQ(Resolved(api, "nvmlGpmMetricsGet"), "");
}

TEST(ResolveNvmlApiTest, NewDriverPrefersNewestVersions) {
  Symbols syms{kRequired};
  syms.names.insert(
      {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
       "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
       "nvmlEventSetWait_v2", "nvmlEventSetWait"});
  NvmlApi api;
  ASSERT_TRUE(ResolveNvmlApi(&Symbols::Lookup, &syms, &api).ok());
  EXPECT_EQ(Resolved(api, "nvmlDeviceGetComputeRunningProcesses_v3"),
            "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(api.process_info_size, 24u);
  EXPECT_EQ(Resolved(api, "nvmlDeviceGetCurrentClocksEventReasons"),
            "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_EQ(Resolved(api, "nvmlEventSetWait_v2"), "nvmlEventSetWait_v2");
}

TEST(NvmlStatusTest, MapsReturnCodes) {
  NvmlApi api;
  EXPECT_TRUE(NvmlStatus(api, nvml::kSuccess, "x").ok());
  EXPECT_EQ(NvmlStatus(api, nvml::kErrorGpuIsLost, "x").code(), StatusCode::kUnavailable);
  EXPECT_NE(NvmlStatus(api, nvml::kErrorGpuIsLost, "x").message().find("NVML_ERROR_GPU_IS_LOST"),
            std::string::npos);
  EXPECT_EQ(NvmlStatus(api, nvml::kErrorNotSupported, "x").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(NvmlStatus(api, nvml::kErrorFunctionNotFound, "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(NvmlStatus(api, nvml::kErrorNoPermission, "x").code(), StatusCode::kPermissionDenied);
}

TEST(LoadNvmlTest, MissingLibraryIsNotFound) {
  auto lib = LoadNvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
