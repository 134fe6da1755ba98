// SPDX-License-Identifier: Apache-2.0
#include "profile/symbolizer.h"

#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace vigil {
namespace {

namespace hot {
__attribute__((noinline)) int ComputeChecksum(const char* text) {
  int sum = 0;
  for (; *text; ++text) sum = sum * 31 + *text;
  return sum;
}
}  // namespace hot

TEST(SymbolizerTest, NamesOwnCppFunctionDemangled) {
  Symbolizer symbolizer;
  auto address = reinterpret_cast<uint64_t>(&hot::ComputeChecksum) + 4;
  Frame frame = symbolizer.Symbolize(getpid(), address);
  EXPECT_EQ(frame.function, "vigil::(anonymous namespace)::hot::ComputeChecksum(char const*)");
  EXPECT_EQ(frame.offset, 4u);
  EXPECT_EQ(frame.module, "profile_unittests");
  EXPECT_TRUE(frame.known());
}

TEST(SymbolizerTest, NamesSharedLibraryFunctions) {
  Symbolizer symbolizer;
  Frame frame = symbolizer.Symbolize(getpid(), reinterpret_cast<uint64_t>(&gelf_getehdr));
  EXPECT_EQ(frame.function, "gelf_getehdr");
  EXPECT_EQ(frame.module.rfind("libelf", 0), 0u) << frame.module;
}

TEST(SymbolizerTest, UnknownAddressesSayUnknown) {
  Symbolizer symbolizer;
  Frame frame = symbolizer.Symbolize(getpid(), 0x10);
  EXPECT_FALSE(frame.known());
  EXPECT_EQ(frame.function, "[unknown]");
}

TEST(SymbolizerTest, JitCodeIsNamedFromThePerfMap) {
  char pattern[] = "/tmp/vigil-perfmap-XXXXXX";
  std::string dir = mkdtemp(pattern);
  void* code = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(code, MAP_FAILED);
  auto start = reinterpret_cast<uint64_t>(code);
  {
    std::ofstream map(dir + "/perf-" + std::to_string(getpid()) + ".map");
    map << std::hex << start << " 100 py::train_step:train.py\n"
        << start + 0x100 << " 80 jitted other\n";
  }
  SymbolizerOptions options;
  options.perf_map_dir = dir;
  Symbolizer symbolizer(options);
  Frame frame = symbolizer.Symbolize(getpid(), start + 0x110);
  EXPECT_EQ(frame.module, "[jit]");
  EXPECT_EQ(frame.function, "jitted other");
  EXPECT_EQ(frame.offset, 0x10u);
  EXPECT_EQ(symbolizer.Symbolize(getpid(), start + 0x200).function, "[unknown]");
  munmap(code, 4096);
  std::filesystem::remove_all(dir);
}

TEST(SymbolizerTest, SeesLibrariesMappedAfterTheFirstRead) {
  Symbolizer symbolizer;
  (void)symbolizer.MapsOf(getpid());
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  Frame frame = symbolizer.Symbolize(getpid(), reinterpret_cast<uint64_t>(page));
  EXPECT_EQ(frame.module, "[anon]");  // Found on the re-read, anonymous, no perf map.
  munmap(page, 4096);
}

TEST(SymbolizerTest, NamesKernelAddressesFromKallsyms) {
  std::ifstream kallsyms("/proc/kallsyms");
  std::string line;
  uint64_t value = 0;
  while (std::getline(kallsyms, line)) {
    std::istringstream fields(line);
    std::string address, type, name;
    fields >> address >> type >> name;
    if (name == "schedule" && (type == "T" || type == "t")) {
      value = std::stoull(address, nullptr, 16);
      break;
    }
  }
  if (value == 0) GTEST_SKIP() << "kernel addresses are hidden (kptr_restrict; needs root)";
  Symbolizer symbolizer;
  Frame frame = symbolizer.Symbolize(getpid(), value + 8);
  EXPECT_EQ(frame.module, "[kernel]");
  EXPECT_EQ(frame.function, "schedule");
  EXPECT_EQ(frame.offset, 8u);
}

}  // namespace
}  // namespace vigil
