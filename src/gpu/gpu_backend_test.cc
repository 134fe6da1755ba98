// SPDX-License-Identifier: Apache-2.0
#include "gpu/gpu_backend.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(GpuBackendTest, NoLibraryInstalledSaysSoInAFewWords) {
  GpuBackendOptions o;
  o.backend = "auto";
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.amd_library = "/nonexistent/librocm_smi64.so";
  auto b = CreateGpuBackend(o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(b.status().message(),
            "no GPU library usable: /nonexistent/libnvidia-ml.so.1 not installed; "
            "/nonexistent/librocm_smi64.so not installed");
}

TEST(GpuBackendTest, ALibraryThatLoadsButIsNotTheRightOneKeepsItsReason) {
  GpuBackendOptions o;
  o.backend = "auto";
  o.nvml_library = "libz.so.1";  // Loads, but exports no NVML.
  o.amd_library = "/nonexistent/librocm_smi64.so";
  auto b = CreateGpuBackend(o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message().find("libz.so.1 not installed"), std::string::npos)
      << b.status().message();
  EXPECT_NE(b.status().message().find("nvml"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace vigil
