// SPDX-License-Identifier: Apache-2.0
// Fuzzes the fleet's ingest of pushed batches (fleet/ingest_batch.h, base/gzip.h) in the order
// vigil-fleet applies them: a body that starts with the gzip magic is inflated with a hard output
// cap, then parsed as a batch. Invariants: inflation never returns more than its cap; a parsed
// batch has a host and a batch id of at most 256 bytes, every sample a name, and labels sorted
// by name.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/gzip.h"
#include "fleet/ingest_batch.h"
#include "fuzz/fuzz_input.h"

namespace {

// Small enough that a few-KiB gzip bomb reaches it; the server's own cap is larger.
constexpr size_t kMaxInflatedBytes = 1 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  std::string inflated;
  if (vigil::IsGzip(body)) {
    auto out = vigil::Gunzip(body, kMaxInflatedBytes);
    if (!out.ok()) {
      return 0;
    }
    VIGIL_FUZZ_CHECK(out->size() <= kMaxInflatedBytes);
    inflated = std::move(*out);
    body = inflated;
  }
  auto batch = vigil::ParseIngestBatch(body);
  if (!batch.ok()) {
    return 0;
  }
  VIGIL_FUZZ_CHECK(!batch->host.empty() && batch->host.size() <= 256);
  VIGIL_FUZZ_CHECK(!batch->batch_id.empty() && batch->batch_id.size() <= 256);
  for (const vigil::IngestSample& s : batch->samples) {
    VIGIL_FUZZ_CHECK(!s.name.empty());
    for (size_t i = 1; i < s.labels.size(); ++i) {
      VIGIL_FUZZ_CHECK(s.labels[i - 1].first <= s.labels[i].first);
    }
  }
  // What was inflated once inflates the same again.
  if (!inflated.empty()) {
    auto again = vigil::Gunzip(vigil::Gzip(inflated), kMaxInflatedBytes);
    VIGIL_FUZZ_CHECK(again.ok() && *again == inflated);
  }
  return 0;
}
