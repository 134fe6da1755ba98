// SPDX-License-Identifier: Apache-2.0
#include "httpd/guarded_server.h"

#include <openssl/err.h>

#include <utility>

#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "httpd/deadline_stream.h"

namespace vigil {
namespace {

// Set on a connection's thread when its head was refused: the body may still be on its way.
thread_local bool refused_head = false;

}  // namespace

void SetJsonError(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  res.set_content(JsonErrorBody(message), "application/json");
}

bool CheckBody(httplib::Request& req, httplib::Response& res, BodyRule rule) {
  const bool has_body =
      req.get_header_value("Content-Length") != "" && req.get_header_value("Content-Length") != "0";
  if (rule == BodyRule::kNone && has_body) {
    SetJsonError(res, 413, "this endpoint takes no request body");
    return false;
  }
  if (!req.has_header("Content-Encoding")) return true;
  const std::string encoding = ToLower(Trim(req.get_header_value("Content-Encoding")));
  if (rule == BodyRule::kGzip && (encoding == "gzip" || encoding == "identity")) {
    // httplib would inflate it, unbounded, before the handler; the handler inflates it instead.
    req.headers.erase("Content-Encoding");
    return true;
  }
  SetJsonError(res, 415,
               "Content-Encoding " + SanitizeForLog(encoding) + " is not accepted here" +
                   (rule == BodyRule::kGzip ? " (gzip is)" : ""));
  return false;
}

GuardedServer::GuardedServer(HttpLimits limits, HeadCheck check)
    : check_(std::move(check)),
      listener_(std::move(limits), [this](const ServedConnection& conn) { return Serve(conn); }) {
  set_payload_max_length(listener_.limits().max_body_bytes);
  // Runs after the head is parsed and before httplib reads any of the body. The request is
  // httplib's own mutable object; only the handler signature is const.
  set_pre_routing_handler([this](const httplib::Request& creq, httplib::Response& res) {
    auto& req = const_cast<httplib::Request&>(creq);
    refused_head = true;
    // The server's rules first (a token, a method), so a refusal says what matters most.
    if (check_ && !check_(req, res)) return HandlerResponse::Handled;
    if (req.has_header("Transfer-Encoding")) {
      SetJsonError(res, 411, "Transfer-Encoding is not accepted: send a Content-Length");
      return HandlerResponse::Handled;
    }
    if (req.has_header("Content-Length")) {
      const std::optional<uint64_t> length = ParseUint64(req.get_header_value("Content-Length"));
      if (!length) {
        SetJsonError(res, 400, "bad Content-Length");
        return HandlerResponse::Handled;
      }
      if (*length > listener_.limits().max_body_bytes) {
        SetJsonError(
            res, 413,
            "request body larger than " + std::to_string(listener_.limits().max_body_bytes));
        return HandlerResponse::Handled;
      }
    }
    refused_head = false;
    return HandlerResponse::Unhandled;
  });
}

GuardedServer::~GuardedServer() {
  Stop();
  if (tls_ != nullptr) SSL_CTX_free(tls_);
}

Status GuardedServer::SetUpTls() {
  tls_ = SSL_CTX_new(TLS_server_method());
  if (tls_ == nullptr) return InternalError("TLS: cannot create a context");
  SSL_CTX_set_min_proto_version(tls_, TLS1_2_VERSION);
  SSL_CTX_set_options(tls_, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(tls_, listener_.limits().tls_cert_file.c_str()) != 1) {
    return InvalidArgumentError("TLS: cannot use certificate " + listener_.limits().tls_cert_file +
                                " (want a PEM certificate chain)");
  }
  if (SSL_CTX_use_PrivateKey_file(tls_, listener_.limits().tls_key_file.c_str(),
                                  SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls_) != 1) {
    return InvalidArgumentError("TLS: cannot use key " + listener_.limits().tls_key_file +
                                " with " + listener_.limits().tls_cert_file +
                                " (want a PEM key matching the certificate)");
  }
  return OkStatus();
}

StatusOr<int> GuardedServer::Start(const std::string& host, int port) {
  if (!listener_.limits().tls_cert_file.empty() || !listener_.limits().tls_key_file.empty()) {
    VIGIL_RETURN_IF_ERROR(SetUpTls());
  }
  return listener_.Start(host, port);
}

void GuardedServer::Stop() { listener_.Stop(); }

bool GuardedServer::Serve(const ServedConnection& conn) {
  const int64_t deadline =
      conn.accepted_ns + listener_.limits().request_deadline_ms * kNanosPerMilli;
  SSL* ssl = nullptr;
  bool ok = true;
  if (tls_ != nullptr) {
    // Worker threads serve one connection after another: nothing left in this thread's error
    // queue by the last one may confuse SSL_get_error() on this one.
    ERR_clear_error();
    ssl = SSL_new(tls_);
    ok = ssl != nullptr && SSL_set_fd(ssl, conn.fd) == 1 && AcceptTls(ssl, conn.fd, deadline);
  }
  std::string limit;
  refused_head = false;
  if (ok) {
    DeadlineStream stream(conn.fd, ssl, deadline,
                          listener_.limits().max_head_bytes + listener_.limits().max_body_bytes,
                          listener_.limits().reply_deadline_ms * kNanosPerMilli);
    bool closed = false;
    // One request a connection: its deadline and byte cap cover the connection's whole life.
    process_request(stream, /*close_connection=*/true, closed, [](httplib::Request&) {});
    limit = stream.limit_hit();
  } else {
    limit = "TLS handshake";
  }
  if (!limit.empty()) {
    VIGIL_LOG_EVERY_N_SEC(INFO, 10, "http: cut off a request from {}: {}", conn.client, limit);
  }
  if (ssl != nullptr) {
    if (ok) SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  return refused_head;
}

}  // namespace vigil
