/* SPDX-License-Identifier: Apache-2.0 */
/* A C library with one known hot function, loaded by hot_ctypes.py through ctypes: the Python
 * test checks that samples read `... -> spin_in_c (hot_ctypes.py:N) -> vigil_hot_c_spin`. */
volatile unsigned long vigil_hot_c_sink = 0;

__attribute__((noinline)) unsigned long vigil_hot_c_spin(unsigned long rounds) {
  for (unsigned long i = 0; i < rounds; ++i) {
    vigil_hot_c_sink = vigil_hot_c_sink * 2862933555777941757UL + i;
  }
  return vigil_hot_c_sink;
}
