// SPDX-License-Identifier: Apache-2.0
#include "profile/elf_image.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "profile/proc_maps.h"

extern "C" __attribute__((noinline, used)) int vigil_elf_test_known_function(int x) {
  return x * 3 + 1;
}

namespace vigil {
namespace {

std::string SelfExe() { return ExecutablePath(getpid()); }

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/vigil-elf-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

int RunQuiet(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str());
}

TEST(ElfImageTest, FindsOwnFunctionAndBuildId) {
  auto image = ElfImage::Load(SelfExe());
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  auto sym = image->FindSymbol("vigil_elf_test_known_function");
  ASSERT_TRUE(sym.has_value());
  EXPECT_GT(sym->size, 0u);
  const ElfSymbol* at = image->SymbolAt(sym->address + 1);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->name, "vigil_elf_test_known_function");
  EXPECT_EQ(image->build_id().size(), 40u);  // SHA-1 build ids, the toolchain's default.
  auto offset = image->FileOffsetOfAddress(sym->address);
  ASSERT_TRUE(offset.has_value());
  EXPECT_EQ(image->AddressOfFileOffset(*offset), sym->address);
}

TEST(ElfImageTest, RuntimeAddressMapsBackToTheSymbol) {
  auto image = ElfImage::Load(SelfExe());
  ASSERT_TRUE(image.ok());
  auto maps = ReadProcMaps(getpid());
  ASSERT_TRUE(maps.ok());
  auto address = reinterpret_cast<uint64_t>(&vigil_elf_test_known_function);
  const Mapping* m = FindMapping(*maps, address);
  ASSERT_NE(m, nullptr);
  auto vaddr = image->AddressOfFileOffset(m->FileOffsetOf(address));
  ASSERT_TRUE(vaddr.has_value());
  const ElfSymbol* sym = image->SymbolAt(*vaddr);
  ASSERT_NE(sym, nullptr);
  EXPECT_EQ(sym->name, "vigil_elf_test_known_function");
}

TEST(ElfImageTest, StrippedFileFindsSymbolsInItsDebugFileByBuildId) {
  TempDir dir;
  auto original = ElfImage::Load(SelfExe());
  ASSERT_TRUE(original.ok());
  const std::string& id = original->build_id();
  ASSERT_EQ(id.size(), 40u);
  std::string stripped = dir.path() + "/stripped";
  std::string debug_dir = dir.path() + "/debug/.build-id/" + id.substr(0, 2);
  std::filesystem::create_directories(debug_dir);
  ASSERT_EQ(RunQuiet("objcopy --only-keep-debug " + SelfExe() + " " + debug_dir + "/" +
                     id.substr(2) + ".debug"),
            0);
  ASSERT_EQ(RunQuiet("objcopy --strip-all " + SelfExe() + " " + stripped), 0);

  auto bare = ElfImage::Load(stripped, /*look_for_debug_file=*/false);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->FindSymbol("vigil_elf_test_known_function").has_value());

  auto with_debug = ElfImage::Load(stripped, true, dir.path() + "/debug");
  ASSERT_TRUE(with_debug.ok());
  EXPECT_TRUE(with_debug->FindSymbol("vigil_elf_test_known_function").has_value());
  const auto& sources = with_debug->symbol_sources();
  EXPECT_NE(std::find(sources.begin(), sources.end(), "debug file"), sources.end());
}

TEST(ElfImageTest, ReadsMiniDebugInfo) {
  TempDir dir;
  std::string d = dir.path();
  // The recipe distributions use: the function symbols, xz-compressed, in .gnu_debugdata.
  ASSERT_EQ(RunQuiet("objcopy --only-keep-debug " + SelfExe() + " " + d + "/mini.debug"), 0);
  ASSERT_EQ(RunQuiet("objcopy --strip-debug " + d + "/mini.debug " + d + "/mini"), 0);
  ASSERT_EQ(RunQuiet("xz -k " + d + "/mini"), 0);
  ASSERT_EQ(RunQuiet("objcopy --strip-all " + SelfExe() + " " + d + "/exe"), 0);
  ASSERT_EQ(RunQuiet("objcopy --add-section .gnu_debugdata=" + d + "/mini.xz " + d + "/exe"), 0);
  auto image = ElfImage::Load(d + "/exe", false);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_TRUE(image->FindSymbol("vigil_elf_test_known_function").has_value());
  const auto& sources = image->symbol_sources();
  EXPECT_NE(std::find(sources.begin(), sources.end(), ".gnu_debugdata"), sources.end());
}

TEST(ElfImageTest, AnswersWhetherAFileDefinesFunctions) {
  EXPECT_TRUE(ElfDefinesFunctions(SelfExe(), {"vigil_elf_test_known_function", "main"}));
  EXPECT_FALSE(ElfDefinesFunctions(SelfExe(), {"vigil_elf_test_known_function", "cudaMalloc"}));
  EXPECT_TRUE(ElfDefinesFunctions(SelfExe(), {}));
  EXPECT_FALSE(ElfDefinesFunctions("/nonexistent", {"main"}));
}

TEST(ElfImageTest, RejectsWhatIsNotElf) {
  TempDir dir;
  std::ofstream(dir.path() + "/text") << "not an elf file";
  EXPECT_FALSE(ElfImage::Load(dir.path() + "/text").ok());
  EXPECT_FALSE(ElfImage::Load(dir.path() + "/missing").ok());
  EXPECT_FALSE(ElfImage::Load(dir.path()).ok());
}

TEST(ElfImageTest, Demangles) {
  EXPECT_EQ(Demangle("_ZN7kernels9gemm_bf16EPf"), "kernels::gemm_bf16(float*)");
  EXPECT_EQ(Demangle("cudaMalloc"), "cudaMalloc");
  EXPECT_EQ(Demangle("_Znot_valid"), "_Znot_valid");
}

}  // namespace
}  // namespace vigil
