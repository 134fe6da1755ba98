// SPDX-License-Identifier: Apache-2.0
// The connection attacks of the HTTP servers' trial, tried on both servers over the one guarded
// listener: vigil-fleet's cpp-httplib server (guarded_server.h) and vigild's GET server
// (get_server.h). Dribbling clients, a dribbled head, an endless head and per-client caps.
#include <unistd.h>

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "base/time_util.h"
#include "base/wait_for.h"
#include "httpd/get_server.h"
#include "httpd/guarded_server.h"
#include "httpd/http_attack.h"

namespace vigil {
namespace {

using namespace http_attack;

// Either server with a /healthz route, behind one face.
class AttackedServer {
 public:
  virtual ~AttackedServer() = default;
  virtual StatusOr<int> Start() = 0;
  virtual size_t open_connections() const = 0;
};

class HttplibServer : public AttackedServer {
 public:
  explicit HttplibServer(HttpLimits limits) : server_(std::move(limits), nullptr) {
    server_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", "text/plain");
    });
  }
  StatusOr<int> Start() override { return server_.Start("127.0.0.1", 0); }
  size_t open_connections() const override { return server_.open_connections(); }

 private:
  GuardedServer server_;
};

class GetOnlyServer : public AttackedServer {
 public:
  explicit GetOnlyServer(HttpLimits limits) : server_(std::move(limits)) {
    server_.Route("/healthz", [](const GetRequest&, GetReply& reply) { reply.body = "ok\n"; });
  }
  StatusOr<int> Start() override { return server_.Start("127.0.0.1", 0); }
  size_t open_connections() const override { return server_.open_connections(); }

 private:
  GetServer server_;
};

enum class Kind { kHttplib, kGetServer };

class ServerAttackTest : public ::testing::TestWithParam<Kind> {
 protected:
  void Start(HttpLimits limits) {
    if (GetParam() == Kind::kHttplib) {
      server_ = std::make_unique<HttplibServer>(std::move(limits));
    } else {
      server_ = std::make_unique<GetOnlyServer>(std::move(limits));
    }
    StatusOr<int> port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }

  std::unique_ptr<AttackedServer> server_;
  int port_ = 0;
};

// httplib's pool had 4 (vigild) or 8 (vigil-fleet) threads: 12 dribblers held them all.
TEST_P(ServerAttackTest, DribblingClientsDoNotStarveANormalOne) {
  Start({.max_connections = 64, .max_connections_per_client = 16});
  Dribblers dribblers(port_, 12, -1);
  ASSERT_TRUE(dribblers.ready());
  int64_t ms = 0;
  EXPECT_EQ(TimedGet(port_, &ms), 200);
  EXPECT_LT(ms, 1000);
}

// Every local user connects from 127.0.0.1: the cap is per uid, so uid 65534 holding its share
// leaves root's scrape room.
TEST_P(ServerAttackTest, OneUsersConnectionsAreCappedAndOthersAreStillServed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  Start({.max_connections = 32, .max_connections_per_client = 8});
  Dribblers dribblers(port_, 40, 65534);
  ASSERT_TRUE(dribblers.ready());
  // The cap is reached (the rest were refused), not merely not yet accepted.
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 8; }, 5));
  int64_t ms = 0;
  EXPECT_EQ(TimedGet(port_, &ms), 200);
  EXPECT_LT(ms, 1000);
}

// A byte every 100 ms restarted httplib's per-read timeout forever; the deadline is for the
// whole head.
TEST_P(ServerAttackTest, ADribbledHeadIsCutOffAtTheRequestDeadline) {
  Start({.request_deadline_ms = 1000});
  Dribblers dribblers(port_, 3, -1);
  ASSERT_TRUE(dribblers.ready());
  ASSERT_TRUE(WaitFor([&] { return server_->open_connections() == 3; }, 2));
  const int64_t t0 = MonotonicNanos();
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }, 4));
  // Held until the deadline (1 s from accept), not dropped at once.
  EXPECT_GE(MonotonicNanos() - t0, 500 * kNanosPerMilli);
}

// A request line without a newline grew httplib's line buffer without bound.
TEST_P(ServerAttackTest, AnEndlessHeadIsCutOffAtTheHeadCap) {
  Start({.max_head_bytes = 16 << 10});
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  const std::string line = "GET /" + std::string(8 << 20, 'a');
  const size_t sent = SendSome(fd, line, 3000);
  ReadUntilClose(fd, 3000);
  ::close(fd);
  EXPECT_LT(sent, line.size()) << "the server read the whole 8 MiB line";
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }, 3));
}

INSTANTIATE_TEST_SUITE_P(Servers, ServerAttackTest,
                         ::testing::Values(Kind::kHttplib, Kind::kGetServer),
                         [](const ::testing::TestParamInfo<Kind>& param_info) {
                           return param_info.param == Kind::kHttplib ? "Httplib" : "GetServer";
                         });

}  // namespace
}  // namespace vigil
