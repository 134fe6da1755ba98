// SPDX-License-Identifier: Apache-2.0
#include "rpc/rpc_workers.h"

#include <utility>

namespace vigil {

RpcWorkers::RpcWorkers(size_t threads, size_t max_queued_per_peer)
    : max_queued_per_peer_(max_queued_per_peer) {
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { Run(); });
  }
}

RpcWorkers::~RpcWorkers() { Stop(); }

bool RpcWorkers::Submit(const std::string& peer, std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      return false;
    }
    std::deque<std::function<void()>>& queue = queues_[peer];
    if (queue.size() >= max_queued_per_peer_) {
      return false;
    }
    if (queue.empty()) {
      turn_.push_back(peer);
    }
    queue.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

void RpcWorkers::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queues_.clear();
    turn_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) {
      t.join();
    }
  }
  threads_.clear();
}

void RpcWorkers::Run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !turn_.empty(); });
      if (stopping_) {
        return;
      }
      const std::string peer = turn_.front();
      turn_.pop_front();
      auto it = queues_.find(peer);
      job = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) {
        queues_.erase(it);
      } else {
        turn_.push_back(peer);  // Its next job waits for every other peer's turn.
      }
    }
    job();
  }
}

}  // namespace vigil
