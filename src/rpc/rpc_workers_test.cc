// SPDX-License-Identifier: Apache-2.0
#include "rpc/rpc_workers.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/wait_for.h"

namespace vigil {
namespace {

// One peer pipelining heavy calls waits behind its own work: another peer's call is next.
TEST(RpcWorkersTest, PeersTakeTurnsAndEachQueueIsBounded) {
  RpcWorkers workers(1, 3);
  std::atomic<bool> release{false};
  std::mutex mu;
  std::vector<std::string> order;
  auto record = [&](const std::string& name) {
    return [&, name] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(name);
    };
  };
  ASSERT_TRUE(workers.Submit("gate", [&] { WaitFor([&] { return release.load(); }, 10); }));
  ASSERT_TRUE(workers.Submit("uid:65534", record("a1")));
  ASSERT_TRUE(workers.Submit("uid:65534", record("a2")));
  ASSERT_TRUE(workers.Submit("uid:65534", record("a3")));
  EXPECT_FALSE(workers.Submit("uid:65534", record("a4"))) << "a peer's queue is bounded";
  ASSERT_TRUE(workers.Submit("uid:0", record("b1")));
  release = true;
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(mu);
    return order.size() == 4;
  }));
  EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "a2", "a3"}));
}

}  // namespace
}  // namespace vigil
