// SPDX-License-Identifier: Apache-2.0
#include "sinks/all_sinks.h"

#include <utility>

#include "base/file_util.h"
#include "base/http_authorization.h"
#include "base/strings.h"
#include "sinks/fleet_push_sink.h"
#include "sinks/jsonl_sink.h"
#include "sinks/remote_write_sink.h"

namespace vigil {
namespace {

constexpr SinkKey kJsonlKeys[] = {
    {.key = "jsonl",
     .help = "Write every sample as JSON lines to PATH, or '-' for stdout",
     .text = &SinkConfig::jsonl},
    {.key = "jsonl_max_bytes",
     .help = "Rotate the JSON-lines file past this size (67108864)",
     .number = &SinkConfig::jsonl_max_bytes},
    {.key = "jsonl_keep_files",
     .help = "Rotated JSON-lines files kept (5)",
     .number = &SinkConfig::jsonl_keep_files},
};

StatusOr<std::unique_ptr<Sink>> CreateJsonl(const SinkConfig& config, const SinkContext&) {
  if (config.jsonl.empty()) {
    return std::unique_ptr<Sink>();
  }
  JsonlSinkOptions jsonl;
  jsonl.path = config.jsonl;
  jsonl.max_file_bytes = static_cast<size_t>(config.jsonl_max_bytes);
  jsonl.keep_files = static_cast<int>(config.jsonl_keep_files);
  return std::unique_ptr<Sink>(std::make_unique<JsonlSink>(jsonl));
}

constexpr SinkKey kFleetKeys[] = {
    {.key = "fleet_url",
     .help = "Push samples to this vigil-fleet URL",
     .text = &SinkConfig::fleet_url},
    {.key = "fleet_token_file",
     .help = "File holding this host's vigil-fleet token",
     .text = &SinkConfig::fleet_token_file},
    {.key = "fleet_ca_file",
     .help = "PEM CA bundle for an https --fleet-url",
     .text = &SinkConfig::fleet_ca_file},
};

StatusOr<std::unique_ptr<Sink>> CreateFleet(const SinkConfig& config, const SinkContext& context) {
  if (config.fleet_url.empty()) {
    return std::unique_ptr<Sink>();
  }
  FleetPushSinkOptions fleet;
  fleet.url = config.fleet_url;
  fleet.host = context.host_name;
  fleet.spool_dir = JoinPath(context.state_dir, "fleet-spool");
  fleet.ca_file = config.fleet_ca_file;
  if (!config.fleet_token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string token, ReadSmallFile(config.fleet_token_file, 4096));
    fleet.token = std::string(Trim(token));
  }
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<FleetPushSink> sink,
                         FleetPushSink::Create(std::move(fleet)));
  return std::unique_ptr<Sink>(std::move(sink));
}

constexpr SinkKey kRemoteWriteKeys[] = {
    {.key = "remote_write_url",
     .help = "Prometheus remote-write URL",
     .text = &SinkConfig::remote_write_url},
    {.key = "remote_write_auth_file",
     .help = "File with one line: bearer TOKEN, or basic USER:PASSWORD",
     .text = &SinkConfig::remote_write_auth_file},
};

StatusOr<std::unique_ptr<Sink>> CreateRemoteWrite(const SinkConfig& config,
                                                  const SinkContext& context) {
  if (config.remote_write_url.empty()) {
    return std::unique_ptr<Sink>();
  }
  RemoteWriteSinkOptions rw;
  rw.url = config.remote_write_url;
  if (!config.remote_write_auth_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(rw.authorization, ReadAuthorizationFile(config.remote_write_auth_file));
  }
  rw.host_label_value = context.host_name;
  rw.buffer_dir = JoinPath(context.state_dir, "remote-write");
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<RemoteWriteSink> sink,
                         RemoteWriteSink::Create(std::move(rw)));
  return std::unique_ptr<Sink>(std::move(sink));
}

constexpr SinkInfo kJsonl{"jsonl", kJsonlKeys, &CreateJsonl};
constexpr SinkInfo kFleet{"fleet", kFleetKeys, &CreateFleet};
constexpr SinkInfo kRemoteWrite{"remote_write", kRemoteWriteKeys, &CreateRemoteWrite};

// The order sinks are created in, and in which vigil status lists them.
constexpr const SinkInfo* kAllSinks[] = {&kJsonl, &kFleet, &kRemoteWrite};

}  // namespace

std::span<const SinkInfo* const> AllSinks() { return kAllSinks; }

}  // namespace vigil
