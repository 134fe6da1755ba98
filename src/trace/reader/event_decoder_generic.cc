// SPDX-License-Identifier: Apache-2.0
// The decoder for any x86-64 (or other) CPU.
#define VIGIL_DECODER_NS generic_impl
#include "trace/reader/event_decoder_impl.inc"
