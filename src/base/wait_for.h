// SPDX-License-Identifier: Apache-2.0
// Polls a condition until it holds or a deadline passes: what tests and tools do while waiting on
// another thread or process, instead of a fixed sleep. Owner: base. Stateless.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace vigil {

// True once `cond` holds; false when `timeout_s` passes first (`cond` is asked once more then).
// `poll`: the pause between tries (longer where each try queries a server).
inline bool WaitFor(const std::function<bool()>& cond, double timeout_s = 60,
                    std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(poll);
  }
  return cond();
}

}  // namespace vigil
