// SPDX-License-Identifier: Apache-2.0
#include "ipc/fabric_server.h"

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/logging.h"
#include "base/strings.h"
#include "metrics/ipc_families.h"

namespace vigil {
namespace {

constexpr double kMaxPid = 4194304;  // PID_MAX_LIMIT.
constexpr double kMaxGpu = 65535;

}  // namespace

FabricServer::FabricServer(ProcessRegistry* registry, JobMetrics* job_metrics,
                           ReplySocketsOptions reply_options)
    : registry_(registry), job_metrics_(job_metrics), replies_(reply_options) {}

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

void FabricServer::Reply(const ReceivedDatagram& d, std::string_view type,
                         std::string_view payload) {
  IpcCounters& counters = registry_->counters();
  if (!endpoint_ || d.from.len <= sizeof(sa_family_t)) {
    ++counters.replies_dropped;  // An unnamed sender cannot be answered.
    return;
  }
  auto bytes = EncodeIpcMessage(type, payload);
  if (!bytes.ok()) {
    ++counters.replies_dropped;
    return;
  }
  Status error;
  switch (replies_.Send(d.cred.uid, d.from, *bytes, &error)) {
    case ReplyOutcome::kSent:
      ++counters.replies_sent;
      return;
    case ReplyOutcome::kUnread:
      ++counters.replies_unread;
      break;
    case ReplyOutcome::kOverBudget:
      ++counters.replies_over_budget;
      break;
    case ReplyOutcome::kFailed:
      ++counters.replies_dropped;
      break;
  }
  VIGIL_LOG_EVERY_N_SEC(DEBUG, 10, "ipc reply dropped: uid={} err={}", d.cred.uid, error.message());
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
    Reply(d, kIpcTypeContext, EncodeContextReplyPayload(count.ok() ? *count : -1));
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
    Reply(d, kIpcTypeRequest, config.ok() ? *config : std::string());
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
  // An integer field within [lo, hi] (`fallback` when absent); nullopt for anything else, so an
  // out-of-range number is refused rather than converted.
  auto integer = [&](const char* key, double fallback, double lo,
                     double hi) -> std::optional<int64_t> {
    const double v = num(key, fallback);
    if (!(v >= lo && v <= hi)) {
      return std::nullopt;
    }
    return static_cast<int64_t>(v);
  };
  if (message.type == kIpcTypeVigilRegister) {
    ClientRegistration reg;
    const std::optional<int64_t> pid = integer("pid", 0, 1, kMaxPid);
    const std::optional<int64_t> gpu = integer("gpu", -1, -1, kMaxGpu);
    const double peak_flops = num("peak_flops", 0);
    if (!pid || !gpu || !(peak_flops >= 0 && peak_flops <= kMaxPeakFlops)) {
      ++counters.malformed;
      return;
    }
    reg.pid = static_cast<int32_t>(*pid);
    if (auto it = doc.find("pids"); it != doc.end() && it->is_array() && it->size() <= 1024) {
      for (const auto& v : *it) {
        if (v.is_number_integer() && v.get<int64_t>() > 0 && v.get<int64_t>() <= kMaxPid) {
          reg.pids.push_back(static_cast<int32_t>(v.get<int64_t>()));
        }
      }
    }
    reg.job_id = str("job_id");
    reg.team = str("team");
    reg.model = str("model");
    reg.framework = str("framework");
    reg.peak_flops = peak_flops;
    reg.gpu = static_cast<int32_t>(*gpu);
    auto p = registry_->RegisterClient(d.cred, reg, d.from);
    nlohmann::json reply = p.ok() ? nlohmann::json{{"ok", true}, {"job_id", p->job_id}}
                                  : nlohmann::json{{"ok", false}, {"error", p.status().message()}};
    Reply(d, kIpcTypeVigilRegister, reply.dump());
  } else if (message.type == kIpcTypeVigilPoll) {
    auto config = registry_->PollClient(d.cred, d.from);
    nlohmann::json reply =
        config.ok() ? nlohmann::json{{"ok", true}, {"config", *config}}
                    : nlohmann::json{{"ok", false}, {"error", config.status().message()}};
    Reply(d, kIpcTypeVigilPoll, reply.dump());
  } else if (message.type == kIpcTypeVigilStep) {
    auto p = registry_->Touch(d.cred);
    if (!p.ok()) {
      ++counters.refused_claims;
      return;
    }
    const std::optional<int64_t> steps = integer("steps", 1, 1, kMaxStepsPerReport);
    const std::optional<int64_t> input_bytes =
        integer("input_bytes", 0, 0, kMaxInputBytesPerReport);
    if (!steps || !input_bytes) {
      ++counters.refused_steps;
      return;
    }
    StepReport report;
    report.steps = *steps;
    report.step_seconds = num("step_seconds", -1);
    report.input_bytes = static_cast<uint64_t>(*input_bytes);
    report.model_flops = num("model_flops", 0);
    if (job_metrics_ == nullptr) {
      return;
    }
    if (Status s = job_metrics_->Record(*p, report); !s.ok()) {
      ++counters.refused_steps;
      VIGIL_LOG_EVERY_N_SEC(WARN, 60, "ipc step report refused: pid={} job_id={} err={}", p->pid,
                            SanitizeForLog(p->job_id, 128), s.message());
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
  out.Add(kIpcDropped, static_cast<double>(c.refused_steps.load()),
          {{"reason", "refused_step_report"}});
  out.Add(kIpcReplies, static_cast<double>(c.replies_sent.load()), {{"outcome", "sent"}});
  out.Add(kIpcReplies, static_cast<double>(c.replies_dropped.load()), {{"outcome", "dropped"}});
  out.Add(kIpcReplies, static_cast<double>(c.replies_unread.load()), {{"outcome", "unread"}});
  out.Add(kIpcReplies, static_cast<double>(c.replies_over_budget.load()),
          {{"outcome", "over_budget"}});
  out.Add(kIpcProcesses, static_cast<double>(registry_->size()));
  return OkStatus();
}

}  // namespace vigil
