# SPDX-License-Identifier: Apache-2.0
# The traced side of snoop_python_overhead: CPython calling the fake CUDA runtime (path in
# argv[1]) through ctypes. Prints "ready PID"; each line "N DEPTH" makes N cudaMalloc +
# cudaFree pairs from DEPTH nested Python frames and prints this thread's CPU nanoseconds per
# pair (the probes' traps and BPF programs are charged to it); an empty line ends it.
import ctypes
import os
import sys
import time


def nest(depth, work):
    if depth <= 1:
        return work()
    return nest(depth - 1, work)


def pairs(rt, n):
    ptr = ctypes.c_void_p()
    ref = ctypes.byref(ptr)
    size = ctypes.c_size_t(256)
    malloc, free = rt.cudaMalloc, rt.cudaFree
    start = time.thread_time_ns()
    for _ in range(n):
        malloc(ref, size)
        free(ptr)
    return (time.thread_time_ns() - start) / n


def main():
    rt = ctypes.CDLL(sys.argv[1])
    rt.cudaFree.argtypes = [ctypes.c_void_p]
    print("ready", os.getpid(), flush=True)
    while True:
        words = sys.stdin.readline().split()
        if len(words) != 2:
            break
        n, depth = int(words[0]), int(words[1])
        print(nest(depth, lambda: pairs(rt, n)), flush=True)


if __name__ == "__main__":
    main()
