// SPDX-License-Identifier: Apache-2.0
#include "ipc/fabric_server.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/strings.h"

namespace vigil {
namespace {

const MetricDesc kIpcDatagrams{"vigil_daemon_ipc_datagrams_total", "IPC fabric datagrams received.",
                               MetricKind::kCounter, ""};
const MetricDesc kIpcDropped{"vigil_daemon_ipc_dropped_total",
                             "IPC fabric datagrams dropped, by reason.", MetricKind::kCounter, ""};
const MetricDesc kIpcReplies{"vigil_daemon_ipc_replies_total", "IPC fabric replies, by outcome.",
                             MetricKind::kCounter, ""};
const MetricDesc kIpcProcesses{"vigil_daemon_ipc_processes",
                               "Processes registered over the IPC fabric.", MetricKind::kGauge, ""};

}  // namespace

FabricServer::FabricServer(ProcessRegistry* registry, JobMetrics* job_metrics)
    : registry_(registry), job_metrics_(job_metrics) {}

FabricServer::~FabricServer() { Stop(); }

Status FabricServer::Start(const FabricServerOptions& options) {
  IpcEndpointOptions ep;
  ep.name = options.ipc_name;
  ep.socket_dir = options.socket_dir;
  ep.max_datagram = kIpcHeaderBytes + kIpcMaxPayloadBytes;
  VIGIL_ASSIGN_OR_RETURN(endpoint_, IpcEndpoint::Bind(ep));
  VIGIL_LOG_INFO("ipc fabric listening: name={}", endpoint_->address().DisplayName());
  return endpoint_->Start([this](const ReceivedDatagram& d) { Handle(d); });
}

void FabricServer::Stop() {
  if (endpoint_) {
    endpoint_->Stop();
  }
}

const IpcAddress& FabricServer::address() const {
  static const IpcAddress kNone;
  return endpoint_ ? endpoint_->address() : kNone;
}

void FabricServer::Reply(const IpcAddress& to, std::string_view type, std::string_view payload) {
  if (!endpoint_ || to.len <= sizeof(sa_family_t)) {
    ++registry_->counters().replies_dropped;  // An unnamed sender cannot be answered.
    return;
  }
  auto bytes = EncodeIpcMessage(type, payload);
  if (!bytes.ok()) {
    ++registry_->counters().replies_dropped;
    return;
  }
  Status s = endpoint_->SendTo(to, *bytes);
  if (s.ok()) {
    ++registry_->counters().replies_sent;
  } else {
    ++registry_->counters().replies_dropped;
    VIGIL_LOG_EVERY_N_SEC(DEBUG, 10, "ipc reply dropped: err={}", s.message());
  }
}

void FabricServer::Handle(const ReceivedDatagram& d) {
  IpcCounters& counters = registry_->counters();
  ++counters.datagrams;
  if (d.truncated) {
    ++counters.oversized;
    return;
  }
  auto message = DecodeIpcMessage(d.bytes);
  if (!message.ok()) {
    if (message.status().code() == StatusCode::kResourceExhausted) {
      ++counters.oversized;
    } else {
      ++counters.malformed;
    }
    VIGIL_LOG_EVERY_N_SEC(DEBUG, 10, "ipc datagram dropped: from={} err={}", d.from.DisplayName(),
                          message.status().message());
    return;
  }
  if (message->type == kIpcTypeContext) {
    auto context = DecodeKinetoContextPayload(message->payload);
    if (!context.ok()) {
      ++counters.malformed;
      return;
    }
    auto count = registry_->RegisterContext(d.cred, *context, d.from);
    if (!count.ok()) {
      VIGIL_LOG_EVERY_N_SEC(WARN, 10, "ipc registration refused: from={} err={}",
                            d.from.DisplayName(), count.status().message());
    }
    Reply(d.from, kIpcTypeContext, EncodeContextReplyPayload(count.ok() ? *count : -1));
  } else if (message->type == kIpcTypeRequest) {
    auto request = DecodeKinetoRequestPayload(message->payload);
    if (!request.ok()) {
      ++counters.malformed;
      return;
    }
    auto config = registry_->Poll(d.cred, *request, d.from);
    if (!config.ok()) {
      VIGIL_LOG_EVERY_N_SEC(WARN, 10, "ipc poll refused: from={} err={}", d.from.DisplayName(),
                            config.status().message());
    }
    Reply(d.from, kIpcTypeRequest, config.ok() ? *config : std::string());
  } else if (message->type.starts_with("vigil.")) {
    HandleVigil(d, *message);
  } else {
    ++counters.unknown_type;
  }
}

void FabricServer::HandleVigil(const ReceivedDatagram& d, const IpcMessage& message) {
  IpcCounters& counters = registry_->counters();
  auto doc = nlohmann::json::parse(message.payload, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    ++counters.malformed;
    return;
  }
  auto str = [&](const char* key) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? SanitizeForLog(it->get<std::string>(), 128)
                                              : std::string();
  };
  auto num = [&](const char* key, double fallback) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_number() ? it->get<double>() : fallback;
  };
  // A number as an integer type: `absent` when missing, `invalid` when out of the type's range
  // or NaN (casting such a double is undefined behaviour).
  auto whole = [&]<typename T>(const char* key, T absent, T invalid) {
    const double v = num(key, static_cast<double>(absent));
    const bool fits = v >= static_cast<double>(std::numeric_limits<T>::min()) &&
                      v < static_cast<double>(std::numeric_limits<T>::max());
    return fits ? static_cast<T>(v) : invalid;
  };
  if (message.type == kIpcTypeVigilRegister) {
    ClientRegistration reg;
    reg.pid = whole("pid", int32_t{0}, int32_t{0});
    if (auto it = doc.find("pids"); it != doc.end() && it->is_array() && it->size() <= 1024) {
      for (const auto& v : *it) {
        if (v.is_number_integer()) {
          reg.pids.push_back(v.get<int32_t>());
        }
      }
    }
    reg.job_id = str("job_id");
    reg.team = str("team");
    reg.model = str("model");
    reg.framework = str("framework");
    reg.peak_flops = num("peak_flops", 0);
    reg.gpu = whole("gpu", int32_t{-1}, int32_t{-1});
    if (reg.pid <= 0) {
      ++counters.malformed;
      return;
    }
    auto p = registry_->RegisterClient(d.cred, reg, d.from);
    nlohmann::json reply = p.ok() ? nlohmann::json{{"ok", true}, {"job_id", p->job_id}}
                                  : nlohmann::json{{"ok", false}, {"error", p.status().message()}};
    Reply(d.from, kIpcTypeVigilRegister, reply.dump());
  } else if (message.type == kIpcTypeVigilPoll) {
    auto config = registry_->PollClient(d.cred, d.from);
    nlohmann::json reply =
        config.ok() ? nlohmann::json{{"ok", true}, {"config", *config}}
                    : nlohmann::json{{"ok", false}, {"error", config.status().message()}};
    Reply(d.from, kIpcTypeVigilPoll, reply.dump());
  } else if (message.type == kIpcTypeVigilStep) {
    auto p = registry_->Touch(d.cred);
    if (!p.ok()) {
      ++counters.refused_claims;
      return;
    }
    StepReport report;
    report.steps = whole("steps", int64_t{1}, int64_t{0});  // 0 is refused.
    report.step_seconds = num("step_seconds", -1);
    const double bytes = num("input_bytes", 0);  // Negative or NaN counts nothing, as before.
    report.input_bytes = bytes > 0 && bytes < 0x1p64 ? static_cast<uint64_t>(bytes) : 0;
    report.model_flops = num("model_flops", 0);
    if (job_metrics_ != nullptr && !job_metrics_->Record(*p, report).ok()) {
      ++counters.malformed;
    }
  } else {
    ++counters.unknown_type;
  }
}

Status FabricServer::Collect(MetricWriter& out) const {
  const IpcCounters& c = registry_->counters();
  out.Add(kIpcDatagrams, static_cast<double>(c.datagrams.load()));
  out.Add(kIpcDropped, static_cast<double>(c.malformed.load()), {{"reason", "malformed"}});
  out.Add(kIpcDropped, static_cast<double>(c.oversized.load()), {{"reason", "oversized"}});
  out.Add(kIpcDropped, static_cast<double>(c.unknown_type.load()), {{"reason", "unknown_type"}});
  out.Add(kIpcDropped, static_cast<double>(c.refused_claims.load()), {{"reason", "refused_claim"}});
  out.Add(kIpcDropped, static_cast<double>(c.registry_full.load()), {{"reason", "registry_full"}});
  out.Add(kIpcReplies, static_cast<double>(c.replies_sent.load()), {{"outcome", "sent"}});
  out.Add(kIpcReplies, static_cast<double>(c.replies_dropped.load()), {{"outcome", "dropped"}});
  out.Add(kIpcProcesses, static_cast<double>(registry_->size()));
  return OkStatus();
}

}  // namespace vigil
