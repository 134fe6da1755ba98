// SPDX-License-Identifier: Apache-2.0
#include "ipc/wire_format.h"

#include <cstring>

#include <fmt/format.h>

namespace vigil {
namespace {

template <typename T>
void AppendRaw(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

template <typename T>
T ReadRaw(std::string_view bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

bool IsPrintableType(std::string_view type) {
  for (char c : type) {
    if (c < 0x21 || c > 0x7e) {
      return false;
    }
  }
  return !type.empty();
}

}  // namespace

StatusOr<std::string> EncodeIpcMessage(std::string_view type, std::string_view payload) {
  if (type.empty() || type.size() >= kIpcTypeBytes || !IsPrintableType(type)) {
    return InvalidArgumentError(
        fmt::format("ipc message type must be 1 to {} printable bytes", kIpcTypeBytes - 1));
  }
  if (payload.size() > kIpcMaxPayloadBytes) {
    return ResourceExhaustedError(
        fmt::format("ipc payload of {} bytes exceeds {}", payload.size(), kIpcMaxPayloadBytes));
  }
  std::string out;
  out.reserve(kIpcHeaderBytes + payload.size());
  AppendRaw<uint64_t>(&out, payload.size());
  out.append(type);
  out.append(kIpcTypeBytes - type.size(), '\0');
  out.append(payload);
  return out;
}

StatusOr<IpcMessage> DecodeIpcMessage(std::string_view datagram, size_t max_payload) {
  if (datagram.size() < kIpcHeaderBytes) {
    return InvalidArgumentError(
        fmt::format("ipc datagram of {} bytes is shorter than the {}-byte "
                    "header",
                    datagram.size(), kIpcHeaderBytes));
  }
  const uint64_t size = ReadRaw<uint64_t>(datagram, 0);
  if (size > max_payload) {
    return ResourceExhaustedError(
        fmt::format("ipc header size {} exceeds the limit {}", size, max_payload));
  }
  if (size != datagram.size() - kIpcHeaderBytes) {
    return InvalidArgumentError(fmt::format("ipc header size {} but {} payload bytes followed",
                                            size, datagram.size() - kIpcHeaderBytes));
  }
  std::string_view type_field = datagram.substr(8, kIpcTypeBytes);
  const size_t nul = type_field.find('\0');
  if (nul == std::string_view::npos) {
    return InvalidArgumentError("ipc type field is not NUL-terminated");
  }
  std::string_view type = type_field.substr(0, nul);
  if (!IsPrintableType(type)) {
    return InvalidArgumentError("ipc type is empty or not printable ASCII");
  }
  return IpcMessage{std::string(type), std::string(datagram.substr(kIpcHeaderBytes))};
}

std::string EncodeKinetoRequestPayload(const KinetoRequest& request) {
  std::string out;
  out.reserve(kKinetoRequestFixedBytes + 4 * request.pids.size());
  AppendRaw<int32_t>(&out, request.config_type);
  AppendRaw<int32_t>(&out, static_cast<int32_t>(request.pids.size()));
  AppendRaw<int64_t>(&out, request.job_id);
  for (int32_t pid : request.pids) {
    AppendRaw<int32_t>(&out, pid);
  }
  return out;
}

StatusOr<KinetoRequest> DecodeKinetoRequestPayload(std::string_view payload) {
  if (payload.size() < kKinetoRequestFixedBytes) {
    return InvalidArgumentError(
        fmt::format("req payload of {} bytes is shorter than 16", payload.size()));
  }
  KinetoRequest request;
  request.config_type = ReadRaw<int32_t>(payload, 0);
  const int32_t n = ReadRaw<int32_t>(payload, 4);
  request.job_id = ReadRaw<int64_t>(payload, 8);
  if (n < 1 || n > kKinetoMaxPids) {
    return InvalidArgumentError(fmt::format("req pid count {} outside [1, {}]", n, kKinetoMaxPids));
  }
  const size_t expected = kKinetoRequestFixedBytes + 4 * static_cast<size_t>(n);
  if (payload.size() != expected) {
    return InvalidArgumentError(
        fmt::format("req with n={} must be {} bytes, got {}", n, expected, payload.size()));
  }
  request.pids.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    const int32_t pid = ReadRaw<int32_t>(payload, kKinetoRequestFixedBytes + 4 * i);
    if (pid <= 0) {
      return InvalidArgumentError(fmt::format("req pid[{}] = {} is not a pid", i, pid));
    }
    request.pids.push_back(pid);
  }
  return request;
}

std::string EncodeKinetoContextPayload(const KinetoContext& context) {
  std::string out;
  out.reserve(kKinetoContextBytes);
  AppendRaw<int32_t>(&out, context.gpu);
  AppendRaw<int32_t>(&out, context.pid);
  AppendRaw<int64_t>(&out, context.job_id);
  return out;
}

StatusOr<KinetoContext> DecodeKinetoContextPayload(std::string_view payload) {
  if (payload.size() != kKinetoContextBytes) {
    return InvalidArgumentError(
        fmt::format("ctxt payload must be 16 bytes, got {}", payload.size()));
  }
  KinetoContext context;
  context.gpu = ReadRaw<int32_t>(payload, 0);
  context.pid = ReadRaw<int32_t>(payload, 4);
  context.job_id = ReadRaw<int64_t>(payload, 8);
  if (context.pid <= 0) {
    return InvalidArgumentError(fmt::format("ctxt pid {} is not a pid", context.pid));
  }
  return context;
}

std::string EncodeContextReplyPayload(int32_t count) {
  std::string out;
  AppendRaw<int32_t>(&out, count);
  return out;
}

StatusOr<int32_t> DecodeContextReplyPayload(std::string_view payload) {
  if (payload.size() != 4) {
    return InvalidArgumentError(fmt::format("ctxt reply must be 4 bytes, got {}", payload.size()));
  }
  return ReadRaw<int32_t>(payload, 0);
}

}  // namespace vigil
