# SPDX-License-Identifier: Apache-2.0
# CPython calling the fake CUDA runtime (path in argv[1]) through ctypes from known functions,
# for the Python frames of vigil snoop's stacks. It talks like snoop_workload: prints
# "ready PID", then each "run" makes STEPS train steps and prints "done"; "exit" ends it. Each
# step leaks 1 MiB from leak_buffer, frees what freed_buffer allocates and syncs in
# wait_for_gpu, all called from train_step. "thread" starts a thread that syncs once and
# waits; "go" lets it sync again from another line and end. With --auto after the library, it
# makes one run and exits.
import ctypes
import os
import sys
import threading

STEPS = 3
LEAK_BYTES = 1 << 20


def leak_buffer(rt, kept):
    ptr = ctypes.c_void_p()
    rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(LEAK_BYTES))  # LEAK_LINE
    kept.append(ptr)


def freed_buffer(rt):
    ptr = ctypes.c_void_p()
    rt.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(4096))
    rt.cudaFree(ptr)


def wait_for_gpu(rt):
    rt.cudaDeviceSynchronize()  # SYNC_LINE


def train_step(rt, kept):
    leak_buffer(rt, kept)  # STEP_LEAK_LINE
    freed_buffer(rt)
    wait_for_gpu(rt)  # STEP_SYNC_LINE


def thread_body(rt, first_done, go):
    rt.cudaStreamSynchronize(None)  # THREAD_FIRST_LINE
    first_done.set()
    go.wait()
    rt.cudaStreamSynchronize(None)  # THREAD_SECOND_LINE


def main():
    rt = ctypes.CDLL(sys.argv[1])
    rt.cudaFree.argtypes = [ctypes.c_void_p]
    kept = []
    thread, go = None, threading.Event()
    if sys.argv[2:] == ["--auto"]:
        for _ in range(STEPS):
            train_step(rt, kept)  # AUTO_LINE
        return
    print("ready", os.getpid(), flush=True)
    while True:
        command = sys.stdin.readline().strip()
        if command == "run":
            for _ in range(STEPS):
                train_step(rt, kept)  # RUN_LINE
            print("done", flush=True)
        elif command == "thread":
            first_done = threading.Event()
            thread = threading.Thread(target=thread_body, args=(rt, first_done, go))
            thread.start()
            first_done.wait()
            print("done", flush=True)
        elif command == "go":
            go.set()
            thread.join()
            print("done", flush=True)
        elif command in ("exit", ""):
            break


if __name__ == "__main__":
    main()  # MODULE_LINE
