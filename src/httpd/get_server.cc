// SPDX-License-Identifier: Apache-2.0
#include "httpd/get_server.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <exception>

#include "base/gzip.h"
#include "base/logging.h"
#include "base/strings.h"
#include "base/time_util.h"
#include "httpd/socket_io.h"

namespace vigil {
namespace {

constexpr size_t kGzipFrom = 1024;  // Smaller bodies gain less than the header costs.

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Compressible(const std::string& content_type) {
  return content_type.rfind("text/", 0) == 0 || content_type.rfind("application/json", 0) == 0;
}

// Reads the request head (through its blank line) by `deadline_ns`, at most `max_bytes`.
// "" with *why set when the head does not arrive whole.
std::string ReadHead(int fd, int64_t deadline_ns, size_t max_bytes, std::string* why) {
  std::string head;
  char buf[4096];
  while (true) {
    const size_t end = head.find("\r\n\r\n");
    if (end != std::string::npos) {
      // Bytes after the blank line would be a body: the rules refuse any before it matters.
      head.resize(end + 4);
      return head;
    }
    if (head.size() > max_bytes) {
      *why = "request size";
      return "";
    }
    const ssize_t n = ::recv(fd, buf, std::min(sizeof(buf), max_bytes + 1 - head.size()), 0);
    if (n > 0) {
      head.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {
      *why = head.empty() ? "" : "closed mid-request";
      return "";
    }
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !WaitFd(fd, POLLIN, deadline_ns)) {
      *why = errno == EAGAIN || errno == EWOULDBLOCK ? "request deadline" : "read error";
      return "";
    }
  }
}

// Refuses what a GET server never reads, from the head alone; true after filling `reply`.
bool RefuseByHead(const GetRequest& req, GetReply& reply) {
  if (req.method != "GET" && req.method != "HEAD") {
    reply.headers.emplace_back("Allow", "GET, HEAD");
    SetJsonError(reply, 405, "only GET is served");
    return true;
  }
  const std::string length = req.Header("content-length");
  if (!length.empty() && length != "0") {
    SetJsonError(reply, 413, "this endpoint takes no request body");
    return true;
  }
  if (!req.Header("content-encoding").empty()) {
    SetJsonError(reply, 415,
                 "Content-Encoding " + SanitizeForLog(req.Header("content-encoding")) +
                     " is not accepted here");
    return true;
  }
  if (!req.Header("transfer-encoding").empty()) {
    SetJsonError(reply, 411, "Transfer-Encoding is not accepted: send a Content-Length");
    return true;
  }
  return false;
}

bool HasLineBreak(std::string_view text) { return text.find_first_of("\r\n") != text.npos; }

// A header name or value with a line break would let a handler's text add headers of its own
// (response splitting): such a header is dropped, such a content type replaced.
std::string Serialize(const GetReply& reply, bool head_only, bool gzip) {
  const std::string_view type = HasLineBreak(reply.content_type)
                                    ? std::string_view("application/octet-stream")
                                    : std::string_view(reply.content_type);
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + ReasonPhrase(reply.status) +
                    "\r\nContent-Type: " + std::string(type) + "\r\n";
  for (const auto& [name, value] : reply.headers) {
    if (!HasLineBreak(name) && !HasLineBreak(value)) out += name + ": " + value + "\r\n";
  }
  std::string gzipped;
  if (gzip) {
    gzipped = Gzip(reply.body);
    out += "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n";
  }
  const std::string& body = gzip ? gzipped : reply.body;
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

}  // namespace

bool GetRequest::HasParam(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return true;
  }
  return false;
}

std::string GetRequest::Param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return "";
}

std::string GetRequest::Header(std::string_view name) const {
  const std::string lower = ToLower(name);
  for (const auto& [key, value] : headers) {
    if (key == lower) return value;
  }
  return "";
}

std::string PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = HexDigit(text[i + 1]), lo = HexDigit(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += plus_is_space && c == '+' ? ' ' : c;
  }
  return out;
}

bool ParseRequestHead(std::string_view head, GetRequest* req) {
  size_t eol = head.find("\r\n");
  if (eol == std::string_view::npos) eol = head.size();
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == 0 || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return false;
  }
  const std::string_view version = line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return false;
  req->method = std::string(line.substr(0, sp1));
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (target.empty() || target[0] != '/') return false;
  const size_t q = target.find('?');
  req->path = PercentDecode(target.substr(0, q), /*plus_is_space=*/false);
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      const size_t amp = query.find('&');
      const std::string_view part = query.substr(0, amp);
      if (!part.empty()) {
        const size_t eq = part.find('=');
        req->params.emplace_back(PercentDecode(part.substr(0, eq), true),
                                 eq == std::string_view::npos
                                     ? std::string()
                                     : PercentDecode(part.substr(eq + 1), true));
      }
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
  }
  size_t pos = eol + 2;
  while (pos < head.size()) {
    size_t next = head.find("\r\n", pos);
    if (next == std::string_view::npos) next = head.size();
    const std::string_view field = head.substr(pos, next - pos);
    pos = next + 2;
    if (field.empty()) break;  // The blank line ends the head.
    const size_t colon = field.find(':');
    // No name, a space before the colon, or a folded line: malformed (RFC 9112 5.1, 5.2).
    if (colon == 0 || colon == std::string_view::npos || field[0] == ' ' || field[0] == '\t' ||
        field[colon - 1] == ' ' || field[colon - 1] == '\t') {
      return false;
    }
    req->headers.emplace_back(ToLower(field.substr(0, colon)),
                              std::string(Trim(field.substr(colon + 1))));
  }
  return true;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    std::string_view item = Trim(accept_encoding.substr(0, comma));
    const size_t semi = item.find(';');
    const std::string coding = ToLower(Trim(item.substr(0, semi)));
    if (coding == "gzip" || coding == "x-gzip" || coding == "*") {
      if (semi == std::string_view::npos) return true;
      std::string params = ToLower(item.substr(semi + 1));
      params.erase(std::remove(params.begin(), params.end(), ' '), params.end());
      // q=0, q=0.0, q=0.00, q=0.000: refused.
      const size_t qpos = params.find("q=");
      if (qpos == std::string::npos) return true;
      const std::string qval = params.substr(qpos + 2);
      if (qval.find_first_not_of("0.") != std::string::npos || qval.empty()) return true;
    }
    if (comma == std::string_view::npos) break;
    accept_encoding.remove_prefix(comma + 1);
  }
  return false;
}

void SetJsonError(GetReply& reply, int status, std::string_view message) {
  reply.status = status;
  reply.content_type = "application/json";
  reply.body = JsonErrorBody(message);
}

GetServer::GetServer(HttpLimits limits)
    : listener_(std::move(limits), [this](const ServedConnection& conn) { return Serve(conn); }) {}

GetServer::~GetServer() { Stop(); }

void GetServer::Route(std::string path, GetHandler handler) {
  exact_.emplace_back(std::move(path), std::move(handler));
}

void GetServer::RoutePrefix(std::string prefix, GetHandler handler) {
  prefixes_.emplace_back(std::move(prefix), std::move(handler));
}

StatusOr<int> GetServer::Start(const std::string& host, int port) {
  return listener_.Start(host, port);
}

void GetServer::Stop() { listener_.Stop(); }

void GetServer::Dispatch(GetRequest& req, GetReply& reply) const {
  const GetHandler* handler = nullptr;
  for (const auto& [path, h] : exact_) {
    if (req.path == path) handler = &h;
  }
  for (size_t i = 0; handler == nullptr && i < prefixes_.size(); ++i) {
    const std::string& prefix = prefixes_[i].first;
    if (req.path.size() > prefix.size() && req.path.compare(0, prefix.size(), prefix) == 0) {
      req.rest = req.path.substr(prefix.size());
      handler = &prefixes_[i].second;
    }
  }
  if (handler == nullptr) {
    SetJsonError(reply, 404, "no such endpoint: " + SanitizeForLog(req.path));
    return;
  }
  try {
    (*handler)(req, reply);
  } catch (const std::exception&) {
    reply = GetReply{};
    SetJsonError(reply, 500, "internal error");
  }
}

bool GetServer::Serve(const ServedConnection& conn) {
  const int64_t deadline =
      conn.accepted_ns + listener_.limits().request_deadline_ms * kNanosPerMilli;
  std::string why;
  const std::string head = ReadHead(conn.fd, deadline, listener_.limits().max_head_bytes, &why);
  GetRequest req;
  GetReply reply;
  bool refused = false;
  if (head.empty()) {
    if (why.empty()) return false;  // Connected and closed without a request.
    VIGIL_LOG_EVERY_N_SEC(INFO, 10, "http: cut off a request from {}: {}", conn.client, why);
    if (why == "request size") {
      SetJsonError(reply, 431,
                   "request head larger than " + std::to_string(listener_.limits().max_head_bytes));
      refused = true;  // Linger: the rest of the head may be on its way.
    } else if (why == "request deadline") {
      SetJsonError(reply, 408, "request not complete in time");  // Then closed at once.
    } else {
      return false;
    }
  } else if (!ParseRequestHead(head, &req)) {
    SetJsonError(reply, 400, "malformed request head");
    refused = true;
  } else if (RefuseByHead(req, reply)) {
    refused = true;
  } else {
    Dispatch(req, reply);
  }
  const bool gzip = reply.status == 200 && reply.body.size() >= kGzipFrom &&
                    Compressible(reply.content_type) && AcceptsGzip(req.Header("accept-encoding"));
  const std::string out = Serialize(reply, req.method == "HEAD", gzip);
  SendAll(conn.fd, out, MonotonicNanos() + listener_.limits().reply_deadline_ms * kNanosPerMilli);
  return refused;
}

}  // namespace vigil
