# SPDX-License-Identifier: Apache-2.0
# A Python workload with a known hot function: <module> -> main -> outer -> hot_loop, the loop
# body on one known line (HOT_LINE). Runs until killed, or for argv[1] seconds.
import sys
import time


def hot_loop(n):
    total = 0
    for i in range(n):
        total += i * i  # HOT_LINE
    return total


def outer(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        hot_loop(100000)


def main():
    print("ready", flush=True)
    outer(float(sys.argv[1]) if len(sys.argv) > 1 else 3600.0)


if __name__ == "__main__":
    main()
