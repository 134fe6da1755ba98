// SPDX-License-Identifier: Apache-2.0
// A busy test process with known hot functions: main -> vigil_test::Outer -> vigil_test::Middle
// -> vigil_test::HotLeaf, spinning until killed (or for argv[1] seconds). Built several ways
// (frame pointers, none, stripped with a separate debug file) so the profiler's tests know
// exactly which frames every sample must show. Prints "ready" once running. With a second
// argument "late-thread", a second thread starts 400 ms after "ready" and runs the same chain.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace vigil_test {

volatile unsigned long sink = 0;  // NOLINT: keeps the loops from being optimised away.

// Called once per HotLeaf call: it keeps HotLeaf from being a leaf function, because GCC 12
// sets up no frame pointer in leaf functions even with -mno-omit-leaf-frame-pointer, and an
// unwinder walking frame pointers would then skip HotLeaf's caller (as with any such build).
__attribute__((noinline)) void Checkpoint(unsigned long rounds) {
  sink = sink + rounds;
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void HotLeaf(unsigned long rounds) {
  Checkpoint(rounds);
  for (unsigned long i = 0; i < rounds; ++i) {
    sink = sink * 2862933555777941757UL + i;
  }
}

__attribute__((noinline)) void Middle(unsigned long rounds) {
  HotLeaf(rounds);
  sink = sink + 1;  // Not a tail call: Middle stays on the stack.
}

__attribute__((noinline)) void Outer(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    Middle(2000000);
  }
}

}  // namespace vigil_test

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3600;
  std::printf("ready\n");
  std::fflush(stdout);
  if (argc > 2 && std::strcmp(argv[2], "late-thread") == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    std::thread late([seconds] { vigil_test::Outer(seconds); });
    vigil_test::Outer(seconds);
    late.join();
    return 0;
  }
  vigil_test::Outer(seconds);
  return 0;
}
