#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks the ctypes module against the library: loading, argument marshalling, and the error a
# missing daemon gives. (The daemon-side exchange is covered by client_unittests.)
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vigil_client  # noqa: E402

LIBRARY = sys.argv.pop(1) if len(sys.argv) > 1 else None


class ClientTest(unittest.TestCase):
    def test_library_loads_and_exports_the_c_api(self):
        lib = vigil_client.load_library(LIBRARY)
        for name in ("vigil_client_open", "vigil_client_poll", "vigil_client_report_steps",
                     "vigil_client_step_end", "vigil_client_close"):
            self.assertTrue(hasattr(lib, name), name)

    def test_open_without_daemon_raises_with_reason(self):
        vigil_client.load_library(LIBRARY)
        with self.assertRaises(vigil_client.VigilClientError) as ctx:
            vigil_client.Client(ipc_name=f"vigil-py-nobody-{os.getpid()}", timeout_ms=50)
        self.assertIn("register with vigild", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
