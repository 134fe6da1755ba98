// SPDX-License-Identifier: Apache-2.0
// vigild's GET server: the head parser, routes, gzip, HEAD, the refusals from the head, and the
// same attacks the httplib server is tried with (guarded_server_test.cc).
#include "httpd/get_server.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/gzip.h"
#include "base/time_util.h"
#include "base/wait_for.h"
#include "httpd/http_attack.h"

namespace vigil {
namespace {

using namespace http_attack;

// The whole reply (status line, headers, body) to a raw request.
std::string RawExchange(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  SendSome(fd, request);
  std::string reply = ReadUntilClose(fd, 3000);
  ::close(fd);
  return reply;
}

std::string BodyOf(const std::string& reply) {
  const size_t end = reply.find("\r\n\r\n");
  return end == std::string::npos ? "" : reply.substr(end + 4);
}

class GetServerTest : public ::testing::Test {
 protected:
  void Start(HttpLimits limits = {}) {
    server_ = std::make_unique<GetServer>(std::move(limits));
    server_->Route("/healthz", [](const GetRequest&, GetReply& reply) { reply.body = "ok\n"; });
    server_->Route("/echo", [](const GetRequest& req, GetReply& reply) {
      reply.body = req.Param("a") + "|" + req.Param("b") + "|" + (req.HasParam("c") ? "c" : "-") +
                   "|" + req.Header("X-Thing");
    });
    server_->Route("/big", [](const GetRequest&, GetReply& reply) {
      reply.content_type = "application/json";
      reply.body = "[" + std::string(4000, '1') + "]";
    });
    server_->Route("/split", [](const GetRequest&, GetReply& reply) {
      reply.content_type = "text/plain\r\nX-Injected: type";
      reply.headers.emplace_back("X-Fine", "yes");
      reply.headers.emplace_back("X-Name", "a\r\nX-Injected: header");
      reply.body = "ok";
    });
    server_->RoutePrefix("/items/", [](const GetRequest& req, GetReply& reply) {
      reply.headers.emplace_back("X-Item", req.rest);
      reply.body = req.rest;
    });
    StatusOr<int> port = server_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }

  std::unique_ptr<GetServer> server_;
  int port_ = 0;
};

TEST(ParseRequestHeadTest, RequestLineQueryAndHeaders) {
  GetRequest req;
  ASSERT_TRUE(
      ParseRequestHead("GET /api/v1/latest?selector=up%7Bjob%3D%22a%22%7D&x=1+2&flag HTTP/1.1\r\n"
                       "Host: a\r\nX-Thing:   spaced value  \r\n\r\n",
                       &req));
  EXPECT_EQ(req.method, "GET");
  EXPECT_EQ(req.path, "/api/v1/latest");
  EXPECT_EQ(req.Param("selector"), "up{job=\"a\"}");
  EXPECT_EQ(req.Param("x"), "1 2");
  EXPECT_TRUE(req.HasParam("flag"));
  EXPECT_FALSE(req.HasParam("nope"));
  EXPECT_EQ(req.Header("x-thing"), "spaced value");
  EXPECT_EQ(req.Header("HOST"), "a");

  GetRequest decoded;
  ASSERT_TRUE(ParseRequestHead("GET /items/a%2Fb+c HTTP/1.0\r\n\r\n", &decoded));
  EXPECT_EQ(decoded.path, "/items/a/b+c");  // '+' is a space only in the query.
}

TEST(ParseRequestHeadTest, MalformedHeadsAreRefused) {
  for (const char* head :
       {"GET /\r\n\r\n", "GET / HTTP/2\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
        "GET x HTTP/1.1\r\n\r\n", " GET / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nName : v\r\n\r\n", "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"}) {
    GetRequest req;
    EXPECT_FALSE(ParseRequestHead(head, &req)) << head;
  }
}

TEST(PercentDecodeTest, BadEscapesStayAsTheyAre) {
  EXPECT_EQ(PercentDecode("%41%zz%4", false), "A%zz%4");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("%", true), "%");
}

TEST(AcceptsGzipTest, ListsAndQualities) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("br, GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("identity, gzip; q=1.0"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("br, deflate"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.000"));
}

TEST_F(GetServerTest, RoutesParamsHeadersAndPrefixes) {
  Start();
  const std::string reply =
      RawExchange(port_, "GET /echo?a=1&b=x%20y&c HTTP/1.1\r\nHost: a\r\nX-Thing: t\r\n\r\n");
  EXPECT_EQ(StatusOf(reply), 200) << reply;
  EXPECT_EQ(BodyOf(reply), "1|x y|c|t");
  EXPECT_NE(reply.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Content-Length: 9\r\n"), std::string::npos);

  const std::string item = RawExchange(port_, "GET /items/job%2F7 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(item), 200);
  EXPECT_EQ(BodyOf(item), "job/7");
  EXPECT_NE(item.find("X-Item: job/7\r\n"), std::string::npos);

  const std::string missing = RawExchange(port_, "GET /items/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(missing), 404);  // A prefix route wants something after the prefix.
  EXPECT_NE(missing.find("application/json"), std::string::npos);
  EXPECT_NE(BodyOf(missing).find("no such endpoint: /items/"), std::string::npos);
}

TEST_F(GetServerTest, HeadersWithLineBreaksAreDropped) {
  Start();
  const std::string reply = RawExchange(port_, "GET /split HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(reply), 200);
  EXPECT_EQ(reply.find("X-Injected"), std::string::npos) << reply;
  EXPECT_NE(reply.find("X-Fine: yes\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Content-Type: application/octet-stream\r\n"), std::string::npos);
  EXPECT_EQ(BodyOf(reply), "ok");
}

TEST_F(GetServerTest, HeadHasTheLengthButNoBody) {
  Start();
  const std::string reply = RawExchange(port_, "HEAD /healthz HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(StatusOf(reply), 200);
  EXPECT_NE(reply.find("Content-Length: 3\r\n"), std::string::npos);
  EXPECT_EQ(BodyOf(reply), "");
}

TEST_F(GetServerTest, LargeTextIsGzippedOnlyWhenAccepted) {
  Start();
  const std::string plain = RawExchange(port_, "GET /big HTTP/1.1\r\n\r\n");
  EXPECT_EQ(BodyOf(plain).size(), 4002u);
  EXPECT_EQ(plain.find("Content-Encoding"), std::string::npos);

  const std::string zipped =
      RawExchange(port_, "GET /big HTTP/1.1\r\nAccept-Encoding: gzip, deflate\r\n\r\n");
  EXPECT_NE(zipped.find("Content-Encoding: gzip\r\n"), std::string::npos) << zipped;
  StatusOr<std::string> body = Gunzip(BodyOf(zipped), 1 << 20);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, "[" + std::string(4000, '1') + "]");

  // A small body is sent as it is.
  const std::string small =
      RawExchange(port_, "GET /healthz HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n");
  EXPECT_EQ(BodyOf(small), "ok\n");
}

TEST_F(GetServerTest, MethodsBodiesAndEncodingsAreRefusedFromTheHead) {
  Start();
  const std::string post =
      RawExchange(port_, "POST /healthz HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(StatusOf(post), 405);
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_EQ(Exchange(port_, "GET /healthz HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"), 413);
  EXPECT_EQ(Exchange(port_, "GET /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), 200);
  EXPECT_EQ(Exchange(port_, "GET /healthz HTTP/1.1\r\nContent-Encoding: gzip\r\n\r\n"), 415);
  EXPECT_EQ(Exchange(port_, "GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            411);
  EXPECT_EQ(Exchange(port_, "GET /healthz HTTP/9\r\n\r\n"), 400);
}

TEST_F(GetServerTest, AHeadOverTheCapIs431) {
  Start({.max_head_bytes = 16 << 10});
  const std::string reply = RawExchange(
      port_, "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(20 << 10, 'b') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(reply), 431) << reply.substr(0, 200);
}

// One connection after another is served by the same worker thread; connections open at the
// same time each get one, and every worker is joined by Stop().
TEST(GetServerWorkersTest, AFinishedConnectionsThreadServesTheNext) {
  std::mutex mu;
  std::condition_variable cv;
  int waiting = 0;
  bool release = false;
  GetServer server(HttpLimits{});
  server.Route("/thread", [](const GetRequest&, GetReply& reply) {
    std::ostringstream id;
    id << std::this_thread::get_id();
    reply.body = id.str();
  });
  server.Route("/hold", [&](const GetRequest&, GetReply& reply) {
    std::unique_lock<std::mutex> lock(mu);
    ++waiting;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
    std::ostringstream id;
    id << std::this_thread::get_id();
    reply.body = id.str();
  });
  StatusOr<int> port = server.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  const std::string first = BodyOf(RawExchange(*port, "GET /thread HTTP/1.1\r\n\r\n"));
  ASSERT_FALSE(first.empty());
  for (int i = 0; i < 3; ++i) {
    // The worker is back waiting once its connection is closed; the next one is its.
    EXPECT_EQ(BodyOf(RawExchange(*port, "GET /thread HTTP/1.1\r\n\r\n")), first);
  }

  std::string held[2];
  std::thread clients[2];
  for (int i = 0; i < 2; ++i) {
    clients[i] =
        std::thread([&, i] { held[i] = BodyOf(RawExchange(*port, "GET /hold HTTP/1.1\r\n\r\n")); });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return waiting == 2; }))
        << "both connections are served at once, each on a thread";
    release = true;
    cv.notify_all();
  }
  for (std::thread& c : clients) c.join();
  EXPECT_FALSE(held[0].empty());
  EXPECT_FALSE(held[1].empty());
  EXPECT_NE(held[0], held[1]);
  // Each worker closed its connection and dropped it in one step before the client read EOF.
  EXPECT_EQ(server.open_connections(), 0u);
  server.Stop();
}

TEST(GetServerStartTest, ABusyPortIsUnavailable) {
  GetServer first(HttpLimits{});
  StatusOr<int> port = first.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  GetServer second(HttpLimits{});
  StatusOr<int> again = second.Start("127.0.0.1", *port);
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("cannot listen on 127.0.0.1:"), std::string::npos);
}

}  // namespace
}  // namespace vigil
