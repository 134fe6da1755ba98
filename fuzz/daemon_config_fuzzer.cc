// SPDX-License-Identifier: Apache-2.0
// Fuzzes vigild's configuration (daemon/config.h): the input is the TOML text of a config file,
// applied over the defaults and then validated against the collectors this build has, as
// LoadConfig does; the first line is also tried as a "key=value" command-line override.
// tomlplusplus throws on bad TOML, so this also checks that no exception escapes ApplyConfigText.
// Invariants: applying the same text twice gives the same answer, and a change report can always be
// made.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/all_collectors.h"
#include "daemon/config.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::vector<std::string_view> known = [] {
    std::vector<std::string_view> names;
    for (const vigil::CollectorInfo* info : vigil::AllCollectors()) {
      names.push_back(info->name);
    }
    return names;
  }();

  const vigil::daemon::DaemonConfig defaults;
  vigil::daemon::DaemonConfig config;
  vigil::Status applied = vigil::daemon::ApplyConfigText(text, "fuzz.toml", &config);
  vigil::daemon::DaemonConfig again;
  vigil::Status applied_again = vigil::daemon::ApplyConfigText(text, "fuzz.toml", &again);
  VIGIL_FUZZ_CHECK(applied.ok() == applied_again.ok());
  if (applied.ok()) {
    [[maybe_unused]] vigil::Status valid = vigil::daemon::ValidateConfig(config, known);
    VIGIL_FUZZ_CHECK(vigil::daemon::DescribeChanges(config, again).empty());
    [[maybe_unused]] auto changes = vigil::daemon::DescribeChanges(defaults, config);
    for (std::string_view name : known) {
      [[maybe_unused]] bool on = vigil::daemon::CollectorEnabled(config, name, true);
      [[maybe_unused]] int64_t every = vigil::daemon::CollectorInterval(config, name);
    }
  }

  const std::string_view first = text.substr(0, text.find('\n'));
  if (const size_t eq = first.find('='); eq != std::string_view::npos) {
    vigil::daemon::DaemonConfig flags;
    if (vigil::daemon::ApplyOverride(first.substr(0, eq), first.substr(eq + 1), &flags).ok()) {
      [[maybe_unused]] vigil::Status valid = vigil::daemon::ValidateConfig(flags, known);
    }
  }
  return 0;
}
