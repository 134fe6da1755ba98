// SPDX-License-Identifier: Apache-2.0
// Per-connection work of the RPC server: reading within the byte budget, decoding frames, the
// token, dispatching (on the loop, or on a worker for heavy methods) and writing replies.
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "base/time_util.h"
#include "rpc/net_util.h"
#include "rpc/rpc_server_impl.h"

namespace vigil {
namespace rpc_internal {

std::string ReplyText(const nlohmann::json& reply) {
  return reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ErrorText(const std::string& message) {
  return ReplyText(nlohmann::json{{"error", message}});
}

}  // namespace rpc_internal

namespace {

constexpr size_t kReadChunk = 64 << 10;

}  // namespace

using rpc_internal::Completion;
using rpc_internal::Connection;
using rpc_internal::ErrorText;
using rpc_internal::ReplyText;

void RpcServer::Impl::Recharge(Connection* c) {
  const size_t now = c->footprint();
  budget.Recharge(c->peer_key, c->charged, now);
  c->charged = now;
  n_buffered.store(budget.buffered_bytes());
}

// Parses a request and takes its token; the reply text instead when it is malformed.
std::optional<std::string> RpcServer::Impl::Decode(const std::string& payload,
                                                   nlohmann::json* request, CallerInfo* caller) {
  *request = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (request->is_discarded()) {
    n_bad_frame.fetch_add(1);
    return ErrorText("request is not valid JSON");
  }
  if (!request->is_object()) {
    n_bad_frame.fetch_add(1);
    return ErrorText("request must be a JSON object");
  }
  if (auto token = request->find("token"); token != request->end()) {
    caller->authenticated = token->is_string() && !options.token.empty() &&
                            ConstantTimeEquals(token->get_ref<const std::string&>(), options.token);
    request->erase("token");  // Handlers never see (or log) the secret.
  }
  return std::nullopt;
}

// Answers on the loop, or hands a heavy request to a worker (the reply comes back through
// done_fd). Returns the reply text, or nullopt when a worker took it.
std::optional<std::string> RpcServer::Impl::Handle(Connection* c, const std::string& payload) {
  nlohmann::json request;
  CallerInfo caller = c->caller;
  if (std::optional<std::string> bad = Decode(payload, &request, &caller)) {
    return bad;
  }
  if (!dispatcher->IsHeavy(request)) {
    return ReplyText(dispatcher->Dispatch(request, caller));
  }
  const int fd = c->fd.get();
  const uint64_t id = c->id;
  auto job = [this, fd, id, request = std::move(request), caller = std::move(caller)] {
    Completion done_call{fd, id, ReplyText(dispatcher->Dispatch(request, caller))};
    {
      std::lock_guard<std::mutex> lock(done_mu);
      done.push_back(std::move(done_call));
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(done_fd.get(), &one, sizeof(one));
  };
  if (!workers->Submit(c->peer_key, std::move(job))) {
    n_busy.fetch_add(1);
    return ErrorText("server busy: too many queries in flight for this peer; retry later");
  }
  c->heavy_running = true;
  c->deadline_ns = INT64_MAX;  // The server, not the client, is taking its time.
  SetEvents(c, 0);             // Nothing more is read until the reply is out.
  return std::nullopt;
}

// Takes the uids the identifier found and the replies workers finished, and sends them.
void RpcServer::Impl::OnCompletions() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = read(done_fd.get(), &count, sizeof(count));
  std::vector<Completion> finished;
  std::vector<rpc_internal::Identified> identities;
  {
    std::lock_guard<std::mutex> lock(done_mu);
    finished.swap(done);
    identities.swap(identified);
  }
  for (const rpc_internal::Identified& i : identities) {
    FinishIdentifying(i);
  }
  for (Completion& f : finished) {
    auto it = conns.find(f.fd);
    if (it == conns.end() || it->second->id != f.id) {
      continue;  // The client went away meanwhile.
    }
    Connection* c = it->second.get();
    c->heavy_running = false;
    Queue(c, f.reply);
    c->deadline_ns = MonotonicNanos() + options.read_deadline_ns;
    if (Flush(c) && ProcessFrames(c) && conns.count(f.fd) != 0) {
      Recharge(c);
    }
  }
}

void RpcServer::Impl::Queue(Connection* c, const std::string& reply_text) {
  StatusOr<std::string> frame = EncodeFrame(reply_text, options.max_reply_bytes);
  if (!frame.ok()) {
    frame = EncodeFrame(ErrorText("reply too large: " + frame.status().message()));
  }
  if (c->out_sent == c->out.size()) {
    c->out.clear();
    c->out_sent = 0;
  }
  c->out.append(*frame);
}

// Sends what is queued. Returns false when the connection was closed.
bool RpcServer::Impl::Flush(Connection* c) {
  while (c->writing()) {
    const ssize_t n = send(c->fd.get(), c->out.data() + c->out_sent, c->out.size() - c->out_sent,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      SetEvents(c, EPOLLOUT | EPOLLRDHUP);  // Stop reading until the reply is out.
      return true;
    }
    if (n <= 0) {
      Close(c->fd.get());
      return false;
    }
    c->out_sent += static_cast<size_t>(n);
  }
  std::string().swap(c->out);  // Gives a large reply's memory back.
  c->out_sent = 0;
  if (c->close_after_write) {
    // Half-close and drain rather than close(): closing with unread input sends a reset,
    // which can destroy the error reply before the client reads it.
    shutdown(c->fd.get(), SHUT_WR);
    c->draining = true;
    c->deadline_ns = std::min(c->deadline_ns, MonotonicNanos() + kNanosPerSecond);
    SetEvents(c, EPOLLIN | EPOLLRDHUP);
    return true;
  }
  SetEvents(c, EPOLLIN | EPOLLRDHUP);
  return true;
}

// Answers every complete frame while nothing is waiting to be written.
bool RpcServer::Impl::ProcessFrames(Connection* c) {
  while (!c->writing() && !c->close_after_write && !c->heavy_running) {
    StatusOr<std::optional<std::string>> frame = c->decoder.Next();
    if (!frame.ok()) {
      (frame.status().code() == StatusCode::kResourceExhausted ? n_too_large : n_bad_frame)
          .fetch_add(1);
      c->close_after_write = true;
      Queue(c, ErrorText(frame.status().message()));
      return Flush(c);
    }
    if (!frame->has_value()) {
      return true;
    }
    n_requests.fetch_add(1);
    std::optional<std::string> reply = Handle(c, **frame);
    if (!reply) {
      return true;  // A worker answers it.
    }
    Queue(c, *reply);
    c->deadline_ns = MonotonicNanos() + options.read_deadline_ns;
    if (!Flush(c)) {
      return false;
    }
  }
  return true;
}

void RpcServer::Impl::OnReadable(Connection* c) {
  char buf[kReadChunk];
  for (;;) {
    if (!c->draining && !budget.MayBuffer(c->peer_key, c->footprint())) {
      // Over the byte budget: leave the rest in the kernel until others free some (the read
      // deadline keeps running).
      n_read_paused.fetch_add(1);
      read_paused.insert(c->fd.get());
      SetEvents(c, EPOLLRDHUP);  // Still told when the client gives up.
      return;
    }
    const ssize_t n = recv(c->fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    }
    if (n <= 0) {
      Close(c->fd.get());
      return;
    }
    if (c->draining) {
      continue;
    }
    c->decoder.Append(std::string_view(buf, static_cast<size_t>(n)));
    const int fd = c->fd.get();
    if (!ProcessFrames(c)) {
      return;  // Closed.
    }
    Recharge(c);
    if (c->writing() || c->heavy_running || conns.count(fd) == 0) {
      return;  // The rest waits until the reply has gone out.
    }
  }
}

void RpcServer::Impl::OnEvent(int fd, uint32_t events) {
  auto it = conns.find(fd);
  if (it == conns.end()) {
    return;
  }
  Connection* c = it->second.get();
  // A hang-up on a connection we are not reading (a worker has its call, or the byte budget
  // holds it back) would otherwise be reported again on every wait; a client held back by the
  // budget that has stopped sending can never complete its frame.
  const bool held_back = c->events == 0 || read_paused.count(fd) != 0;
  if ((events & EPOLLERR) != 0 || ((events & (EPOLLHUP | EPOLLRDHUP)) != 0 && held_back)) {
    Close(fd);
    return;
  }
  if ((events & EPOLLOUT) != 0) {
    if (!Flush(c) || !ProcessFrames(c)) {
      return;
    }
    Recharge(c);
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) != 0 && !c->writing() && !c->heavy_running) {
    OnReadable(c);
  }
}

// Reads again from connections the byte budget held back, once it has room for them.
void RpcServer::Impl::ResumePaused() {
  for (auto it = read_paused.begin(); it != read_paused.end();) {
    auto conn = conns.find(*it);
    if (conn == conns.end()) {
      it = read_paused.erase(it);
      continue;
    }
    Connection* c = conn->second.get();
    if (!budget.MayBuffer(c->peer_key, c->footprint())) {
      ++it;
      continue;
    }
    if (!c->writing() && !c->heavy_running) {
      SetEvents(c, EPOLLIN | EPOLLRDHUP);
    }
    it = read_paused.erase(it);
  }
}

}  // namespace vigil
