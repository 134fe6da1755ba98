// SPDX-License-Identifier: Apache-2.0
// Byte layout of the Kineto IPC fabric (the datagrams PyTorch's libkineto exchanges with a
// Dynolog-compatible daemon) and of Vigil's extensions to it. Every datagram is a 40-byte header
// {uint64 size (native order), char type[32] NUL-terminated} followed by exactly `size` payload
// bytes. Pure functions over byte strings: every length is validated before it is used, so a
// hostile datagram yields an error, never an out-of-bounds read. Facts in docs/protocols.md,
// "Kineto IPC fabric". Owner: ipc. Thread-compatible (no state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace vigil {

inline constexpr size_t kIpcTypeBytes = 32;
inline constexpr size_t kIpcHeaderBytes = 8 + kIpcTypeBytes;  // 40
// The largest datagram the daemon accepts (a request with 4096 pids is 16 + 16 KiB).
inline constexpr size_t kIpcMaxPayloadBytes = 64 * 1024;
// Kineto sends the process and its ancestors; deeper chains than this are refused.
inline constexpr int32_t kKinetoMaxPids = 1024;
inline constexpr size_t kKinetoRequestFixedBytes = 16;  // int type, int n, int64 jobid.
inline constexpr size_t kKinetoContextBytes = 16;       // int32 gpu, int32 pid, int64 jobid.

// Message types (the `type` field).
inline constexpr std::string_view kIpcTypeRequest = "req";   // Kineto poll / config reply.
inline constexpr std::string_view kIpcTypeContext = "ctxt";  // Kineto registration / count.
// Vigil extensions (JSON payloads, see docs/protocols.md): registration with job labels, poll
// for trace requests, and progress reports.
inline constexpr std::string_view kIpcTypeVigilRegister = "vigil.reg";
inline constexpr std::string_view kIpcTypeVigilPoll = "vigil.poll";
inline constexpr std::string_view kIpcTypeVigilStep = "vigil.step";

// Kineto's LibkinetoConfigType bits in a request's `type`.
inline constexpr int32_t kKinetoConfigEvents = 0x1;
inline constexpr int32_t kKinetoConfigActivities = 0x2;

struct IpcMessage {
  std::string type;     // Without the trailing NULs.
  std::string payload;  // Exactly header.size bytes.
  bool operator==(const IpcMessage&) const = default;
};

// Header + payload. InvalidArgument when the type does not fit (31 characters at most) or is
// empty, ResourceExhausted when the payload is above kIpcMaxPayloadBytes.
StatusOr<std::string> EncodeIpcMessage(std::string_view type, std::string_view payload);
// Validates: at least 40 bytes; header size equal to the bytes that follow and at most
// `max_payload`; a NUL inside the 32-byte type; a type of printable ASCII, 1 to 31 characters.
StatusOr<IpcMessage> DecodeIpcMessage(std::string_view datagram,
                                      size_t max_payload = kIpcMaxPayloadBytes);

// LibkinetoRequest {int type; int n; int64_t jobid; int32_t pids[n];} (16 + 4n bytes).
struct KinetoRequest {
  int32_t config_type = 0;
  int64_t job_id = 0;
  std::vector<int32_t> pids;  // Leaf (the sender) first, then its ancestors.
  bool operator==(const KinetoRequest&) const = default;
};
std::string EncodeKinetoRequestPayload(const KinetoRequest& request);
// Checks 1 <= n <= kKinetoMaxPids, 16 + 4n == size, and every pid > 0.
StatusOr<KinetoRequest> DecodeKinetoRequestPayload(std::string_view payload);

// LibkinetoContext {int32_t gpu; int32_t pid; int64_t jobid;} (16 bytes).
struct KinetoContext {
  int32_t gpu = 0;
  int32_t pid = 0;
  int64_t job_id = 0;
  bool operator==(const KinetoContext&) const = default;
};
std::string EncodeKinetoContextPayload(const KinetoContext& context);
// Checks size == 16 and pid > 0.
StatusOr<KinetoContext> DecodeKinetoContextPayload(std::string_view payload);

// The daemon's answer to "ctxt": an int32 (processes of that job on that GPU), type "ctxt".
std::string EncodeContextReplyPayload(int32_t count);
StatusOr<int32_t> DecodeContextReplyPayload(std::string_view payload);

}  // namespace vigil
