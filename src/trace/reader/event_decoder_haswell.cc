// SPDX-License-Identifier: Apache-2.0
// The decoder compiled for AVX2 CPUs (CMake adds -mavx2 -mbmi -mbmi2 -mlzcnt -mpclmul to this
// file only); simdjson's On-Demand then parses with 256-bit SIMD.
#define VIGIL_DECODER_NS haswell_impl
#include "trace/reader/event_decoder_impl.inc"
