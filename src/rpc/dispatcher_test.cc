// SPDX-License-Identifier: Apache-2.0
#include "rpc/dispatcher.h"

#include <unistd.h>

#include <stdexcept>

#include <gtest/gtest.h>

namespace vigil {
namespace {

CallerInfo Tcp(bool loopback, bool authenticated = false) {
  CallerInfo c;
  c.transport = CallerInfo::Transport::kTcp;
  c.loopback = loopback;
  c.authenticated = authenticated;
  return c;
}

CallerInfo Unix(int uid) {
  CallerInfo c;
  c.transport = CallerInfo::Transport::kUnix;
  c.uid = uid;
  return c;
}

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d_.Register("getStatus", [](const nlohmann::json&, const CallerInfo&) {
      return nlohmann::json{{"status", 1}};
    });
    d_.Register(
        "startTrace",
        [](const nlohmann::json& req, const CallerInfo&) {
          return nlohmann::json{{"ok", req.value("n", 0)}};
        },
        RpcAccess::kControl);
    d_.Register("boom", [](const nlohmann::json&, const CallerInfo&) -> nlohmann::json {
      throw std::runtime_error("exploded");
    });
  }
  static bool IsError(const nlohmann::json& reply) { return reply.contains("error"); }
  RpcDispatcher d_;
};

TEST_F(DispatcherTest, CallsTheNamedHandler) {
  EXPECT_EQ(d_.Dispatch({{"fn", "getStatus"}}, Tcp(true)), (nlohmann::json{{"status", 1}}));
  EXPECT_EQ(d_.Dispatch({{"fn", "startTrace"}, {"n", 3}}, Tcp(true))["ok"], 3);
}

TEST_F(DispatcherTest, UnknownMethodIsAnErrorReply) {
  nlohmann::json reply = d_.Dispatch({{"fn", "nope"}}, Tcp(true));
  ASSERT_TRUE(IsError(reply));
  EXPECT_NE(reply["error"].get<std::string>().find("unknown method: nope"), std::string::npos);
}

TEST_F(DispatcherTest, MissingOrNonStringFnIsAnErrorReply) {
  EXPECT_TRUE(IsError(d_.Dispatch({{"x", 1}}, Tcp(true))));
  EXPECT_TRUE(IsError(d_.Dispatch({{"fn", 7}}, Tcp(true))));
  EXPECT_TRUE(IsError(d_.Dispatch(nlohmann::json::array({1, 2}), Tcp(true))));
}

TEST_F(DispatcherTest, HandlerExceptionBecomesAnErrorReply) {
  nlohmann::json reply = d_.Dispatch({{"fn", "boom"}}, Tcp(true));
  ASSERT_TRUE(IsError(reply));
  EXPECT_NE(reply["error"].get<std::string>().find("exploded"), std::string::npos);
}

TEST_F(DispatcherTest, RemoteCallerWithoutTokenIsRefusedEvenForReads) {
  EXPECT_TRUE(IsError(d_.Dispatch({{"fn", "getStatus"}}, Tcp(false))));
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "getStatus"}}, Tcp(false, true))));
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Tcp(false, true))));
}

TEST_F(DispatcherTest, LoopbackIsTrustedForControlCalls) {
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Tcp(true))));
}

TEST_F(DispatcherTest, UnixControlNeedsRootOrTheDaemonsUser) {
  const int own = static_cast<int>(geteuid());
  const int other = own == 0 ? 4242 : own + 1;
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Unix(own))));
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Unix(0))));
  nlohmann::json denied = d_.Dispatch({{"fn", "startTrace"}}, Unix(other));
  ASSERT_TRUE(IsError(denied));
  EXPECT_NE(denied["error"].get<std::string>().find("permission denied"), std::string::npos);
  // Reads stay open to any local user.
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "getStatus"}}, Unix(other))));
  // The token overrides the uid check.
  CallerInfo with_token = Unix(other);
  with_token.authenticated = true;
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, with_token)));
}

TEST_F(DispatcherTest, MethodsListsRegisteredNames) {
  EXPECT_EQ(d_.Methods(), (std::vector<std::string>{"boom", "getStatus", "startTrace"}));
}

}  // namespace
}  // namespace vigil
