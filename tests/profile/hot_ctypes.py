# SPDX-License-Identifier: Apache-2.0
# Python calling into C through ctypes: <module> -> main -> spin_in_c -> vigil_hot_c_spin (a
# test library, path in argv[1]). Runs until killed, or for argv[2] seconds.
import ctypes
import sys
import time


def spin_in_c(lib):
    lib.vigil_hot_c_spin(ctypes.c_ulong(20000000))  # CALL_LINE


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.vigil_hot_c_spin.restype = ctypes.c_ulong
    lib.vigil_hot_c_spin.argtypes = [ctypes.c_ulong]
    print("ready", flush=True)
    end = time.monotonic() + (float(sys.argv[2]) if len(sys.argv) > 2 else 3600.0)
    while time.monotonic() < end:
        spin_in_c(lib)  # LOOP_LINE


if __name__ == "__main__":
    main()
