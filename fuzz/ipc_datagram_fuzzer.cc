// SPDX-License-Identifier: Apache-2.0
// Fuzzes the IPC fabric the daemon serves (ipc/wire_format.h, ipc/fabric_server.h,
// ipc/process_registry.h): the input is a stream of datagrams, each a 40-byte header and the
// payload its size field announces (a single real datagram is a valid input; what does not
// frame is one last datagram). Each is handled by a FabricServer over a real registry that
// verifies claims against a small /proc tree in a scratch directory (pid 4242 with ancestors
// 4000 and 1; pid 5000 sees itself as pid 7 in a container), sent once from each of those two
// senders. A config is pending for 4242, so a poll can take it. Also decodes each payload as
// every Kineto struct and checks that what decodes re-encodes to what it came from.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "base/file_util.h"
#include "base/logging.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_temp_dir.h"
#include "ipc/fabric_server.h"
#include "ipc/job_metrics.h"
#include "ipc/process_registry.h"
#include "ipc/wire_format.h"
#include "metrics/metric.h"

namespace {

// Static, so its destructor removes the tree when the process exits.
const vigil::fuzz::FuzzTempDir& ProcTree() {
  static vigil::fuzz::FuzzTempDir dir;
  static const bool filled = [] {
    const struct {
      int pid;
      const char* status;
    } kProcs[] = {
        {1, "Name:\tsystemd\nPPid:\t0\nNSpid:\t1\n"},
        {4000, "Name:\tbash\nPPid:\t1\nNSpid:\t4000\n"},
        {4242,
         "Name:\tpython3\nState:\tS (sleeping)\nPPid:\t4000\nUid:\t1000\t1000\t1000\t1000\n"
         "NSpid:\t4242\n"},
        {5000, "Name:\tpython3\nPPid:\t4000\nNSpid:\t5000\t7\n"},
    };
    for (const auto& p : kProcs) {
      const std::string pid_dir = dir.path() + "/" + std::to_string(p.pid);
      [[maybe_unused]] vigil::Status s = vigil::MakeDirs(pid_dir);
      std::ofstream(pid_dir + "/status") << p.status;
    }
    return true;
  }();
  (void)filled;
  return dir;
}

void CheckStructs(std::string_view payload) {
  if (auto r = vigil::DecodeKinetoRequestPayload(payload); r.ok()) {
    VIGIL_FUZZ_CHECK(!r->pids.empty() && r->pids.size() <= vigil::kKinetoMaxPids);
    VIGIL_FUZZ_CHECK(vigil::EncodeKinetoRequestPayload(*r) == payload);
  }
  if (auto c = vigil::DecodeKinetoContextPayload(payload); c.ok()) {
    VIGIL_FUZZ_CHECK(c->pid > 0);
    VIGIL_FUZZ_CHECK(vigil::EncodeKinetoContextPayload(*c) == payload);
  }
  if (auto n = vigil::DecodeContextReplyPayload(payload); n.ok()) {
    auto again = vigil::DecodeContextReplyPayload(vigil::EncodeContextReplyPayload(*n));
    VIGIL_FUZZ_CHECK(again.ok() && *again == *n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vigil::InitLogging(vigil::LogLevel::kOff);
  ProcTree();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int64_t now = 1'000'000'000;
  vigil::ProcessRegistryOptions ro;
  ro.proc_root = ProcTree().path();
  ro.max_processes = 8;
  // The scheduler's job for 4242 wins over whatever it claims (as JobResolver::SettleClaim does).
  ro.settle_claim = [](int32_t host_pid, const vigil::JobInfo& claim) {
    vigil::JobInfo settled = claim;
    if (host_pid == 4242) {
      settled.job_id = "1234";
    }
    return settled;
  };
  vigil::ProcessRegistry registry(ro, [&now] { return now; });
  vigil::JobMetrics job_metrics([&now] { return now; });
  vigil::FabricServer server(&registry, &job_metrics);

  vigil::RegisteredProcess waiting;
  waiting.pid = waiting.host_pid = 4242;
  waiting.pids = waiting.host_pids = {4242, 4000, 1};
  waiting.uid = 1000;
  waiting.source = "kineto";
  registry.Adopt(waiting);
  VIGIL_FUZZ_CHECK(registry.Offer(4242, "ACTIVITIES_DURATION_MSECS=500", "tr-1"));

  std::string_view stream(reinterpret_cast<const char*>(data), size);
  for (int n = 0; n < 16 && !stream.empty(); ++n) {
    size_t take = stream.size();
    if (stream.size() >= vigil::kIpcHeaderBytes) {
      uint64_t payload = 0;
      std::memcpy(&payload, stream.data(), sizeof payload);
      if (payload <= stream.size() - vigil::kIpcHeaderBytes) {
        take = vigil::kIpcHeaderBytes + payload;
      }
    }
    vigil::ReceivedDatagram d;
    d.bytes = std::string(stream.substr(0, take));
    d.full_size = d.bytes.size();
    stream.remove_prefix(take);

    auto message = vigil::DecodeIpcMessage(d.bytes);
    if (message.ok()) {
      VIGIL_FUZZ_CHECK(!message->type.empty() && message->type.size() < vigil::kIpcTypeBytes);
      VIGIL_FUZZ_CHECK(message->payload.size() <= vigil::kIpcMaxPayloadBytes);
      // Bytes after the type's NUL are not part of the message, so compare messages, not bytes.
      auto again = vigil::EncodeIpcMessage(message->type, message->payload);
      VIGIL_FUZZ_CHECK(again.ok() && again->size() == d.bytes.size());
      auto redecoded = vigil::DecodeIpcMessage(*again);
      VIGIL_FUZZ_CHECK(redecoded.ok() && *redecoded == *message);
      CheckStructs(message->payload);
    }
    for (int sender : {4242, 5000}) {
      d.cred = {sender, 1000, 1000};
      server.Handle(d);
      now += 100'000'000;
    }
  }
  VIGIL_FUZZ_CHECK(registry.size() <= ro.max_processes);

  vigil::MetricBatch batch;
  vigil::MetricWriter out(&batch);
  VIGIL_FUZZ_CHECK(server.Collect(out).ok());
  [[maybe_unused]] vigil::Status s = job_metrics.Collect(out);
  now += 120 * int64_t{1'000'000'000};
  registry.Expire();
  return 0;
}
