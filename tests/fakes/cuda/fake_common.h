/* SPDX-License-Identifier: Apache-2.0 */
/* What the fake CUDA libraries share: the attribute that keeps every entry point a real,
 * separately probeable function, distinct fake device addresses, and the sync sleep. */
#ifndef VIGIL_TESTS_FAKE_CUDA_COMMON_H_
#define VIGIL_TESTS_FAKE_CUDA_COMMON_H_

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Exported, never inlined, cloned or folded into another function (the build also passes
 * -fno-ipa-icf), so a uprobe on the symbol sees every call. */
#define FAKE_API __attribute__((visibility("default"), noinline, noclone, used))

/* Every entry point bumps its own counter, so no two bodies are identical. */
#define FAKE_TOUCH(n) (fake_calls[(n)] += 1)

/* Sleeps FAKE_CUDA_SYNC_US microseconds (default 1000): what a sync blocks for. */
static inline void fake_sync_sleep(void) {
  static long us = -1;
  if (us < 0) {
    const char* env = getenv("FAKE_CUDA_SYNC_US");
    us = env ? strtol(env, NULL, 10) : 1000;
    if (us < 0) us = 0;
  }
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

#endif /* VIGIL_TESTS_FAKE_CUDA_COMMON_H_ */
