// SPDX-License-Identifier: Apache-2.0
// Fuzzes the Kineto config filter and the trace-file decision (ipc/trace_config.h). The input is
// a Dynolog-style config text (what setKinetOnDemandRequest carries). Invariants:
//  - a parsed config has at most 64 entries, every one passes ValidateKinetoEntry, no value holds
//    a line break or NUL, and its text form parses back to the same config;
//  - the log file the daemon decides, for the requested ACTIVITIES_LOG_FILE and for the whole
//    input taken as a requested path, lies strictly beneath the trace root: it starts with
//    "<root>/", has no "." or ".." component, names a file (not a directory), and so does the
//    per-pid name Kineto derives from it. An honoured request is kept byte for byte.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_input.h"
#include "ipc/trace_config.h"

namespace {

constexpr std::string_view kTraceId = "tr-0000abcd-0001";

// True when `path` is "<root>/a/b..." with no ".", ".." or empty last component.
bool StrictlyBeneath(std::string_view root_dir, std::string_view path) {
  if (!path.starts_with(root_dir) || path.size() <= root_dir.size() ||
      path[root_dir.size()] != '/') {
    return false;
  }
  std::string_view rest = path.substr(root_dir.size() + 1);
  std::string_view last;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    last = rest.substr(0, slash);
    if (last == "." || last == "..") {
      return false;
    }
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  return !last.empty() && path.back() != '/';
}

void CheckDecision(std::string_view root, std::string_view requested) {
  std::string root_dir(root);
  while (root_dir.size() > 1 && root_dir.back() == '/') {
    root_dir.pop_back();
  }
  const vigil::LogFileDecision d = vigil::DecideLogFile(root, kTraceId, requested);
  VIGIL_FUZZ_CHECK(StrictlyBeneath(root_dir, d.path));
  VIGIL_FUZZ_CHECK(d.rewritten || d.path == requested || requested.empty());
  VIGIL_FUZZ_CHECK(d.rewritten == !d.note.empty());
  const bool valid = vigil::ValidateKinetoEntry(vigil::kKinetoLogFileKey, requested).ok();
  if (valid || d.rewritten) {
    VIGIL_FUZZ_CHECK(d.path.find('\0') == std::string::npos);
    VIGIL_FUZZ_CHECK(d.path.find_first_of("\n\r") == std::string::npos);
  }
  for (int32_t pid : {1, 4242, 2147483647}) {
    VIGIL_FUZZ_CHECK(StrictlyBeneath(root_dir, vigil::KinetoTraceFileForPid(d.path, pid)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = vigil::ParseKinetoConfig(text);
  if (config.ok()) {
    VIGIL_FUZZ_CHECK(config->entries.size() <= 64);
    for (const auto& [key, value] : config->entries) {
      VIGIL_FUZZ_CHECK(vigil::ValidateKinetoEntry(key, value).ok());
      VIGIL_FUZZ_CHECK(value.find_first_of(std::string_view("\n\r\0", 3)) == std::string::npos);
    }
    auto again = vigil::ParseKinetoConfig(config->ToString());
    VIGIL_FUZZ_CHECK(again.ok());
    VIGIL_FUZZ_CHECK(again->entries == config->entries);
    const std::string* log_file = config->Find(vigil::kKinetoLogFileKey);
    for (std::string_view root : {"/tmp/vigil-traces", "/var/lib/vigil/traces/"}) {
      CheckDecision(root, log_file != nullptr ? *log_file : "");
    }
  }
  if (size <= 4096) {
    for (std::string_view root : {"/tmp/vigil-traces", "/var/lib/vigil/traces/"}) {
      CheckDecision(root, text);
    }
  }
  return 0;
}
