// SPDX-License-Identifier: Apache-2.0
// The RPC server's worker threads for expensive methods (RpcCost::kHeavy: range queries, /proc
// walks), so the event loop keeps answering cheap calls while they run. Jobs are queued per
// peer and taken round-robin across peers, so one client pipelining heavy queries waits behind
// its own work, not in front of everyone's; each peer may queue a bounded number. Submit() and
// Stop() from the loop thread; jobs run on the workers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vigil {

class RpcWorkers {
 public:
  RpcWorkers(size_t threads, size_t max_queued_per_peer);
  ~RpcWorkers();  // Stop().
  RpcWorkers(const RpcWorkers&) = delete;
  RpcWorkers& operator=(const RpcWorkers&) = delete;

  // Queues `job` for `peer`; false when that peer already has max_queued_per_peer waiting.
  bool Submit(const std::string& peer, std::function<void()> job);
  // Drops queued jobs, waits for running ones and joins the threads. Idempotent.
  void Stop();

 private:
  void Run();

  const size_t max_queued_per_peer_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::deque<std::function<void()>>> queues_;
  std::deque<std::string> turn_;  // Peers with queued jobs, in the order they are served.
  std::vector<std::thread> threads_;
};

}  // namespace vigil
