// SPDX-License-Identifier: Apache-2.0
#include "rpc/rpc_client.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "base/file_util.h"
#include "base/time_util.h"
#include "rpc/framing.h"
#include "rpc/net_util.h"

namespace vigil {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes.
Status WaitFor(int fd, short events, int64_t deadline_mono_ns, const std::string& what) {
  for (;;) {
    const int64_t left = deadline_mono_ns - MonotonicNanos();
    if (left <= 0) {
      return DeadlineExceededError(what + ": timed out");
    }
    pollfd pfd{fd, events, 0};
    const int rc = poll(&pfd, 1, static_cast<int>((left + kNanosPerMilli - 1) / kNanosPerMilli));
    if (rc > 0) {
      return OkStatus();
    }
    if (rc < 0 && errno != EINTR) {
      return ErrnoStatus(errno, what);
    }
  }
}

}  // namespace

std::string DefaultDaemonSocketPath() {
  const uid_t uid = geteuid();
  if (uid == 0) {
    return "/run/vigil/vigild.sock";
  }
  const char* runtime_dir = getenv("XDG_RUNTIME_DIR");  // NOLINT(concurrency-mt-unsafe)
  if (runtime_dir != nullptr && runtime_dir[0] == '/' && IsDirectory(runtime_dir)) {
    return std::string(runtime_dir) + "/vigil/vigild.sock";
  }
  return fmt::format("/tmp/vigil-{}/vigild.sock", uid);
}

StatusOr<RpcClient> RpcClient::Connect(const std::string& target, int64_t deadline_ns) {
  VIGIL_ASSIGN_OR_RETURN(ScopedFd fd, ConnectTo(target, deadline_ns));
  return RpcClient(target, std::move(fd));
}

StatusOr<nlohmann::json> RpcClient::Call(const nlohmann::json& request, int64_t deadline_ns) {
  const int64_t deadline = MonotonicNanos() + deadline_ns;
  if (!fd_.valid()) {
    return FailedPreconditionError("rpc " + target_ + ": connection already failed");
  }
  // The trailing newline is JSON whitespace to an RPC server, and ends the "request line" of an
  // HTTP server dialled by mistake, which then answers at once (400) instead of waiting for more.
  const std::string text =
      request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  VIGIL_ASSIGN_OR_RETURN(std::string frame, EncodeFrame(text));
  size_t sent = 0;
  while (sent < frame.size()) {
    VIGIL_RETURN_IF_ERROR(WaitFor(fd_.get(), POLLOUT, deadline, "send to " + target_));
    const ssize_t n =
        send(fd_.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      continue;
    }
    if (n < 0) {
      Status err = UnavailableError(fmt::format("send to {}: {}", target_, strerrordesc_np(errno)));
      fd_.Reset();
      return err;
    }
    sent += static_cast<size_t>(n);
  }
  FrameDecoder decoder(kMaxReplyBytes);
  char buf[64 << 10];
  std::string head;  // The reply's first bytes: "HTTP/" is an HTTP server, not an RPC one.
  for (;;) {
    StatusOr<std::optional<std::string>> reply = decoder.Next();
    if (!reply.ok()) {
      fd_.Reset();
      return DataLossError(fmt::format("reply from {}: {}", target_, reply.status().message()));
    }
    if (reply->has_value()) {
      nlohmann::json doc = nlohmann::json::parse(**reply, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded()) {
        return DataLossError("reply from " + target_ + " is not valid JSON");
      }
      return doc;
    }
    VIGIL_RETURN_IF_ERROR(WaitFor(fd_.get(), POLLIN, deadline, "reply from " + target_));
    const ssize_t n = recv(fd_.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      continue;
    }
    if (n <= 0) {
      Status err =
          n == 0
              ? UnavailableError("rpc " + target_ + ": connection closed before the reply")
              : UnavailableError(fmt::format("recv from {}: {}", target_, strerrordesc_np(errno)));
      fd_.Reset();
      return err;
    }
    if (head.size() < 5) {
      head.append(buf, std::min<size_t>(5 - head.size(), static_cast<size_t>(n)));
      if (head == "HTTP/") {
        fd_.Reset();
        return FailedPreconditionError(fmt::format(
            "{} answered in HTTP: that is an HTTP port (vigild's /metrics port is 9479 by "
            "default), not an RPC port; vigild takes RPC on port {} unless its --rpc-listen says "
            "otherwise",
            target_, kDefaultRpcPort));
      }
    }
    decoder.Append(std::string_view(buf, static_cast<size_t>(n)));
  }
}

}  // namespace vigil
