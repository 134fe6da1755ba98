// SPDX-License-Identifier: Apache-2.0
#include "ipc/endpoint.h"

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ipc/ipc_test_util.h"

namespace vigil {
namespace {

std::string UniqueName(const char* tag) { return fmt::format("vigil-ept-{}-{}", getpid(), tag); }

TEST(IpcAddressTest, AbstractNameCountsBothNuls) {
  auto addr = MakeIpcAddress("dynolog");
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(addr->len, sizeof(sa_family_t) + 1 + 7 + 1);
  EXPECT_EQ(addr->addr.sun_path[0], '\0');
  EXPECT_EQ(std::string(addr->addr.sun_path + 1, 7), "dynolog");
  EXPECT_EQ(addr->addr.sun_path[8], '\0');
  EXPECT_EQ(addr->DisplayName(), "dynolog");
}

TEST(IpcAddressTest, SocketDirUsesAFile) {
  auto addr = MakeIpcAddress("dynolog", "/tmp/k");
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(std::string(addr->addr.sun_path), "/tmp/k/dynolog");
  EXPECT_EQ(addr->len, sizeof(sa_family_t) + 14 + 1);
  EXPECT_FALSE(MakeIpcAddress(std::string(200, 'a')).ok());
}

TEST(IpcEndpointTest, ReceivesWithSenderCredentialsAndRepliesToItsAddress) {
  IpcEndpointOptions server_options;
  server_options.name = UniqueName("srv");
  auto server = IpcEndpoint::Bind(server_options);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  IpcEndpointOptions client_options;
  client_options.name = UniqueName("cli");
  client_options.pass_credentials = false;
  auto client = IpcEndpoint::Bind(client_options);
  ASSERT_TRUE(client.ok());

  ASSERT_TRUE((*client)->SendTo((*server)->address(), "hello").ok());
  auto got = (*server)->Receive(5000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bytes, "hello");
  EXPECT_FALSE(got->truncated);
  EXPECT_EQ(got->cred.pid, getpid());
  EXPECT_EQ(got->cred.uid, static_cast<int>(getuid()));
  EXPECT_EQ(got->from, (*client)->address());
  EXPECT_EQ(got->from.DisplayName(), client_options.name);

  ASSERT_TRUE((*server)->SendTo(got->from, "world").ok());
  auto reply = (*client)->Receive(5000);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->bytes, "world");
}

TEST(IpcEndpointTest, FlagsOversizedDatagrams) {
  IpcEndpointOptions options;
  options.name = UniqueName("big");
  options.max_datagram = 16;
  auto server = IpcEndpoint::Bind(options);
  ASSERT_TRUE(server.ok());
  auto client = IpcEndpoint::Bind(IpcEndpointOptions{});
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->SendTo((*server)->address(), std::string(100, 'x')).ok());
  auto got = (*server)->Receive(5000);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->truncated);
  EXPECT_EQ(got->full_size, 100u);
  EXPECT_EQ(got->bytes.size(), 16u);
}

TEST(IpcEndpointTest, FilesystemModeBindsUnderTheSocketDir) {
  testing_util::TempDir dir;
  IpcEndpointOptions options;
  options.name = "dynolog";
  options.socket_dir = dir.path();
  {
    auto server = IpcEndpoint::Bind(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    EXPECT_TRUE(PathExists(dir.path() + "/dynolog"));
    IpcEndpointOptions client_options;
    client_options.name = "client1";
    client_options.socket_dir = dir.path();
    auto client = IpcEndpoint::Bind(client_options);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->SendTo((*server)->address(), "x").ok());
    auto got = (*server)->Receive(5000);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(got->from.DisplayName(), dir.path() + "/client1");
  }
  EXPECT_FALSE(PathExists(dir.path() + "/dynolog"));  // Removed on destruction.
}

TEST(IpcEndpointTest, SendToMissingPeerFailsWithoutBlocking) {
  auto client = IpcEndpoint::Bind(IpcEndpointOptions{});
  ASSERT_TRUE(client.ok());
  auto nowhere = MakeIpcAddress(UniqueName("nobody"));
  ASSERT_TRUE(nowhere.ok());
  EXPECT_FALSE((*client)->SendTo(*nowhere, "x").ok());
}

TEST(IpcEndpointTest, ReceiveLoopRunsHandlerUntilStopped) {
  IpcEndpointOptions options;
  options.name = UniqueName("loop");
  auto server = IpcEndpoint::Bind(options);
  ASSERT_TRUE(server.ok());
  std::atomic<int> seen{0};
  ASSERT_TRUE((*server)->Start([&](const ReceivedDatagram&) { ++seen; }).ok());
  auto client = IpcEndpoint::Bind(IpcEndpointOptions{});
  ASSERT_TRUE(client.ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE((*client)->SendTo((*server)->address(), "x").ok());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seen.load() < 10 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(seen.load(), 10);
  (*server)->Stop();
}

}  // namespace
}  // namespace vigil
