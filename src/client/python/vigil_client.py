# SPDX-License-Identifier: Apache-2.0
"""Python bindings for libvigil_client (ctypes, no build step).

    import vigil_client
    client = vigil_client.Client(job_id="train-42", team="vision", model="resnet50",
                                 framework="jax", peak_flops=989e12)
    client.on_trace(lambda config: start_my_profiler(config))
    client.start_polling(interval_ms=1000)
    for batch in data:
        step(batch)
        client.step_end(input_bytes=batch.nbytes, model_flops=flops_per_step)
    client.close()

The library is found through $VIGIL_CLIENT_LIBRARY, else the platform's search path
(libvigil_client.so.0 / libvigil_client.so).
"""

import ctypes
import ctypes.util
import os

__all__ = ["Client", "VigilClientError", "load_library"]


class VigilClientError(RuntimeError):
    pass


class _Options(ctypes.Structure):
    _fields_ = [
        ("ipc_name", ctypes.c_char_p),
        ("socket_dir", ctypes.c_char_p),
        ("job_id", ctypes.c_char_p),
        ("team", ctypes.c_char_p),
        ("model", ctypes.c_char_p),
        ("framework", ctypes.c_char_p),
        ("peak_flops", ctypes.c_double),
        ("gpu", ctypes.c_int),
        ("timeout_ms", ctypes.c_int),
    ]


_TRACE_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)
_lib = None


def load_library(path=None):
    """Loads libvigil_client once; later calls return the same handle."""
    global _lib
    if _lib is not None:
        return _lib
    candidates = [path, os.environ.get("VIGIL_CLIENT_LIBRARY"), "libvigil_client.so.0",
                  ctypes.util.find_library("vigil_client")]
    last_error = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            lib = ctypes.CDLL(candidate)
            break
        except OSError as e:
            last_error = e
    else:
        raise VigilClientError(f"libvigil_client not found (set VIGIL_CLIENT_LIBRARY): {last_error}")
    lib.vigil_client_options_init.argtypes = [ctypes.POINTER(_Options)]
    lib.vigil_client_open.argtypes = [ctypes.POINTER(_Options), ctypes.c_char_p, ctypes.c_size_t]
    lib.vigil_client_open.restype = ctypes.c_void_p
    lib.vigil_client_close.argtypes = [ctypes.c_void_p]
    lib.vigil_client_job_id.argtypes = [ctypes.c_void_p]
    lib.vigil_client_job_id.restype = ctypes.c_char_p
    lib.vigil_client_set_trace_callback.argtypes = [ctypes.c_void_p, _TRACE_CALLBACK,
                                                    ctypes.c_void_p]
    lib.vigil_client_poll.argtypes = [ctypes.c_void_p]
    lib.vigil_client_start_polling.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.vigil_client_report_steps.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_double,
                                              ctypes.c_uint64, ctypes.c_double]
    lib.vigil_client_step_end.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_double]
    _lib = lib
    return lib


def _b(text):
    return None if text is None else text.encode()


class Client:
    """A registration with the local vigild; close() (or a with-block) ends it."""

    def __init__(self, job_id=None, team=None, model=None, framework=None, peak_flops=0.0,
                 gpu=-1, ipc_name=None, socket_dir=None, timeout_ms=1000, library=None):
        self._lib = load_library(library)
        options = _Options()
        self._lib.vigil_client_options_init(ctypes.byref(options))
        self._keep = [_b(v) for v in (ipc_name, socket_dir, job_id, team, model, framework)]
        (options.ipc_name, options.socket_dir, options.job_id, options.team, options.model,
         options.framework) = self._keep
        options.peak_flops = float(peak_flops)
        options.gpu = int(gpu)
        options.timeout_ms = int(timeout_ms)
        err = ctypes.create_string_buffer(256)
        self._handle = self._lib.vigil_client_open(ctypes.byref(options), err, len(err))
        if not self._handle:
            raise VigilClientError(err.value.decode(errors="replace"))
        self._callback = None

    @property
    def job_id(self):
        return self._lib.vigil_client_job_id(self._handle).decode()

    def on_trace(self, callback):
        """callback(config: str) runs when the daemon delivers a trace request."""
        def trampoline(config, _user):
            callback(config.decode(errors="replace"))
        self._callback = _TRACE_CALLBACK(trampoline)  # Keep it alive while registered.
        self._lib.vigil_client_set_trace_callback(self._handle, self._callback, None)

    def poll(self):
        """1 when a trace request was delivered, 0 when none was pending."""
        rc = self._lib.vigil_client_poll(self._handle)
        if rc < 0:
            raise VigilClientError("poll failed: no reply from vigild")
        return rc

    def start_polling(self, interval_ms=1000):
        if self._lib.vigil_client_start_polling(self._handle, int(interval_ms)) != 0:
            raise VigilClientError("already polling")

    def report_steps(self, steps, step_seconds, input_bytes=0, model_flops=0.0):
        if self._lib.vigil_client_report_steps(self._handle, int(steps), float(step_seconds),
                                               int(input_bytes), float(model_flops)) != 0:
            raise VigilClientError("bad step report or send failure")

    def step_end(self, input_bytes=0, model_flops=0.0):
        if self._lib.vigil_client_step_end(self._handle, int(input_bytes),
                                           float(model_flops)) != 0:
            raise VigilClientError("send failure")

    def close(self):
        if self._handle:
            self._lib.vigil_client_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
