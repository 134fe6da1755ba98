// SPDX-License-Identifier: Apache-2.0
#include "rpc/dispatcher.h"

#include <unistd.h>

#include <stdexcept>

#include <gtest/gtest.h>

namespace vigil {
namespace {

CallerInfo Tcp(bool loopback, bool authenticated = false, int uid = -1) {
  CallerInfo c;
  c.transport = CallerInfo::Transport::kTcp;
  c.loopback = loopback;
  c.authenticated = authenticated;
  c.uid = uid;
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
    d_.Register(
        "pauseAll", [](const nlohmann::json&, const CallerInfo&) { return nlohmann::json{}; },
        RpcAccess::kAdmin);
    d_.Register(
        "query", [](const nlohmann::json&, const CallerInfo&) { return nlohmann::json{}; },
        RpcAccess::kRead, RpcCost::kHeavy);
    d_.Register("boom", [](const nlohmann::json&, const CallerInfo&) -> nlohmann::json {
      throw std::runtime_error("exploded");
    });
  }
  static bool IsError(const nlohmann::json& reply) { return reply.contains("error"); }
  RpcDispatcher d_;
};

TEST_F(DispatcherTest, CallsTheNamedHandler) {
  EXPECT_EQ(d_.Dispatch({{"fn", "getStatus"}}, Tcp(true)), (nlohmann::json{{"status", 1}}));
  EXPECT_EQ(d_.Dispatch({{"fn", "startTrace"}, {"n", 3}}, Tcp(true, false, 0))["ok"], 3);
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
  EXPECT_TRUE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Tcp(false, false, 0))));
}

TEST_F(DispatcherTest, LoopbackControlNeedsAKnownUidOrTheToken) {
  nlohmann::json denied = d_.Dispatch({{"fn", "startTrace"}}, Tcp(true));
  ASSERT_TRUE(IsError(denied));
  EXPECT_NE(denied["error"].get<std::string>().find("uid the daemon can establish"),
            std::string::npos);
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Tcp(true, false, 65534))));
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Tcp(true, true))));
}

TEST_F(DispatcherTest, AdminCallsNeedAPrivilegedCaller) {
  const int own = static_cast<int>(geteuid());
  const int other = own == 0 ? 4242 : own + 1;
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "pauseAll"}}, Unix(own))));
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "pauseAll"}}, Tcp(true, false, 0))));
  for (const CallerInfo& c : {Unix(other), Tcp(true, false, other), Tcp(true)}) {
    nlohmann::json denied = d_.Dispatch({{"fn", "pauseAll"}}, c);
    ASSERT_TRUE(IsError(denied));
    EXPECT_NE(denied["error"].get<std::string>().find("permission denied"), std::string::npos);
  }
  // Another user's known uid may make control calls (limited by the handler) and reads.
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "startTrace"}}, Unix(other))));
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "getStatus"}}, Unix(other))));
  CallerInfo with_token = Unix(other);
  with_token.authenticated = true;
  EXPECT_FALSE(IsError(d_.Dispatch({{"fn", "pauseAll"}}, with_token)));
}

TEST_F(DispatcherTest, PrivilegeAndOwnership) {
  const int other = static_cast<int>(geteuid()) == 0 ? 4242 : static_cast<int>(geteuid()) + 1;
  EXPECT_TRUE(CallerIsPrivileged(Unix(0)));
  EXPECT_FALSE(CallerIsPrivileged(Unix(other)));
  EXPECT_FALSE(CallerIsPrivileged(Tcp(true)));
  EXPECT_TRUE(CallerMayTouchUid(Unix(other), other));
  EXPECT_FALSE(CallerMayTouchUid(Unix(other), other + 1));
  EXPECT_FALSE(CallerMayTouchUid(Unix(other), -1));
  EXPECT_FALSE(CallerMayTouchUid(Tcp(true), -1));
  EXPECT_TRUE(CallerMayTouchUid(Unix(0), -1));
}

TEST_F(DispatcherTest, HeavyMethodsAreKnownBeforeDispatch) {
  EXPECT_TRUE(d_.IsHeavy({{"fn", "query"}}));
  EXPECT_FALSE(d_.IsHeavy({{"fn", "getStatus"}}));
  EXPECT_FALSE(d_.IsHeavy({{"fn", "nope"}}));
  EXPECT_FALSE(d_.IsHeavy(nlohmann::json::array()));
}

TEST_F(DispatcherTest, MethodsListsRegisteredNames) {
  EXPECT_EQ(d_.Methods(),
            (std::vector<std::string>{"boom", "getStatus", "pauseAll", "query", "startTrace"}));
}

}  // namespace
}  // namespace vigil
