// SPDX-License-Identifier: Apache-2.0
// The sink table's vocabulary: the config keys of every sink (SinkConfig, one field per key),
// what the daemon hands every sink besides its keys (SinkContext), and one row per sink
// (SinkInfo: name, keys, create function). vigild's config parser, its flags and its wiring read
// the rows (all_sinks.h), so adding a sink adds a row and its fields here, nothing in the daemon.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sinks/sink.h"

namespace vigil {

// Keys of the sinks (config file keys; flags are --key with '-' for '_').
struct SinkConfig {
  std::string jsonl;  // "" = off, "-" = stdout, else a file path.
  int64_t jsonl_max_bytes = 64 << 20;
  int64_t jsonl_keep_files = 5;
  std::string fleet_url;
  std::string fleet_token_file;  // Token this host presents to vigil-fleet ("" = none).
  std::string fleet_ca_file;     // CA bundle for an https fleet URL ("" = the system's).
  std::string remote_write_url;
  std::string remote_write_auth_file;  // "bearer TOKEN" or "basic USER:PASSWORD" (one line).
};

// Daemon-wide settings a sink may need.
struct SinkContext {
  std::string host_name;  // This host's name (never empty).
  std::string state_dir;  // Where buffers that must survive a restart live (never empty).
};

// One config key of a sink: exactly one of `text` and `number` is set.
struct SinkKey {
  std::string_view key;
  std::string_view help;  // For --help.
  std::string SinkConfig::*text = nullptr;
  int64_t SinkConfig::*number = nullptr;  // Takes integers >= 0.
};

struct SinkInfo {
  std::string_view name;  // As in `vigil status` and the sink="..." label.
  std::span<const SinkKey> keys;
  // The sink the config asks for, or null (and OK) when it does not turn this sink on.
  // InvalidArgument for a bad value (a URL that does not parse, an unreadable token file).
  StatusOr<std::unique_ptr<Sink>> (*create)(const SinkConfig& config, const SinkContext& context);
};

}  // namespace vigil
