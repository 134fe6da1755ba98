// SPDX-License-Identifier: Apache-2.0
#include "ipc/reply_sockets.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace vigil {
namespace {

// A peer bound to an abstract name; it reads only when told to.
std::unique_ptr<IpcEndpoint> Peer(const std::string& tag, bool pass_credentials = false) {
  IpcEndpointOptions options;
  options.name = fmt::format("vigil-rs-{}-{}", getpid(), tag);
  options.pass_credentials = pass_credentials;
  options.receive_buffer_bytes = 0;
  auto ep = IpcEndpoint::Bind(options);
  EXPECT_TRUE(ep.ok()) << ep.status().ToString();
  return ep.ok() ? std::move(*ep) : nullptr;
}

// Sends until the destination's backlog is full (a peer that never reads); returns the outcome
// that ended it.
ReplyOutcome FillBacklog(ReplySockets& sockets, int uid, const IpcEndpoint& peer) {
  const std::string reply(512, 'r');
  Status error;
  for (int i = 0; i < 100000; ++i) {
    ReplyOutcome outcome = sockets.Send(uid, peer.address(), reply, &error);
    if (outcome != ReplyOutcome::kSent) {
      return outcome;
    }
  }
  return ReplyOutcome::kSent;
}

void Drain(IpcEndpoint& peer) {
  while (peer.Receive(0).ok()) {
  }
}

TEST(ReplySocketsTest, APeerThatDoesNotReadLosesOnlyItsOwnReplies) {
  ReplySockets sockets;
  auto stuck = Peer("stuck");
  auto reader = Peer("reader");
  ASSERT_EQ(FillBacklog(sockets, 1000, *stuck), ReplyOutcome::kUnread);
  Status error;
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(sockets.Send(1000, reader->address(), "poll reply", &error), ReplyOutcome::kSent)
        << i << " " << error.ToString();
    ASSERT_TRUE(reader->Receive(1000).ok());
  }
  EXPECT_EQ(sockets.Send(1000, stuck->address(), "x", &error), ReplyOutcome::kUnread);
  Drain(*stuck);  // Once it reads, it is answered again.
  EXPECT_EQ(sockets.Send(1000, stuck->address(), "x", &error), ReplyOutcome::kSent);
}

TEST(ReplySocketsTest, CapsPerUidAndInAllAndTakesOverOnlyIdleSockets) {
  ReplySocketsOptions options;
  options.max_per_uid = 2;
  options.max_total = 3;
  ReplySockets sockets(options);
  std::vector<std::unique_ptr<IpcEndpoint>> peers;
  for (int i = 0; i < 5; ++i) {
    peers.push_back(Peer(std::to_string(i)));
  }
  Status error;
  // uid 7 holds two destinations that never read: a third gets no socket.
  ASSERT_EQ(FillBacklog(sockets, 7, *peers[0]), ReplyOutcome::kUnread);
  ASSERT_EQ(FillBacklog(sockets, 7, *peers[1]), ReplyOutcome::kUnread);
  EXPECT_EQ(sockets.Send(7, peers[2]->address(), "x", &error), ReplyOutcome::kOverBudget);
  EXPECT_EQ(error.code(), StatusCode::kResourceExhausted);
  // Another uid still has room of its own.
  EXPECT_EQ(sockets.Send(8, peers[3]->address(), "x", &error), ReplyOutcome::kSent);
  EXPECT_EQ(sockets.size(), 3u);
  // The total cap is reached: a new destination takes over a socket only once all its replies
  // have been read.
  EXPECT_EQ(sockets.Send(9, peers[4]->address(), "x", &error), ReplyOutcome::kOverBudget);
  ASSERT_TRUE(peers[3]->Receive(1000).ok());
  EXPECT_EQ(sockets.Send(9, peers[4]->address(), "x", &error), ReplyOutcome::kSent);
  EXPECT_EQ(sockets.size(), 3u);
  // A non-reading destination that starts reading frees its socket for its uid's next peer.
  Drain(*peers[0]);
  EXPECT_EQ(sockets.Send(7, peers[2]->address(), "x", &error), ReplyOutcome::kSent);
  EXPECT_EQ(sockets.size(), 3u);
}

TEST(ReplySocketsTest, ReplySocketsReceiveNothing) {
  ReplySockets sockets;
  auto peer = Peer("p", /*pass_credentials=*/true);  // The kernel may autobind the sender.
  Status error;
  ASSERT_EQ(sockets.Send(1, peer->address(), "x", &error), ReplyOutcome::kSent);
  auto reply = peer->Receive(1000);
  ASSERT_TRUE(reply.ok());
  // Unnamed, or named but shut for reading: a peer cannot queue datagrams on it.
  EXPECT_TRUE(reply->from.len <= sizeof(sa_family_t) || !peer->SendTo(reply->from, "hi").ok());
}

}  // namespace
}  // namespace vigil
