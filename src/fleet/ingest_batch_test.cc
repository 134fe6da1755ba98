// SPDX-License-Identifier: Apache-2.0
#include "fleet/ingest_batch.h"

#include <gtest/gtest.h>

#include "base/gzip.h"

namespace vigil {
namespace {

constexpr const char* kBatch = R"({"host":"node01","batch_id":"b1","seq":7,"samples":[
  {"name":"vigil_gpu_allocated_seconds_total","kind":"counter",
   "labels":{"job_id":"7","gpu_uuid":"GPU-1"},"value":12.5,"time_ns":1764410994000000000},
  {"name":"vigil_gpu_up","labels":{},"value":1,"time_ns":1764410994000000000}]})";

TEST(IngestBatchTest, ParsesTheDocumentedFormat) {
  StatusOr<IngestBatch> b = ParseIngestBatch(kBatch);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->host, "node01");
  EXPECT_EQ(b->batch_id, "b1");
  EXPECT_EQ(b->seq, 7);
  ASSERT_EQ(b->samples.size(), 2u);
  EXPECT_TRUE(b->samples[0].counter);
  EXPECT_FALSE(b->samples[1].counter);
  EXPECT_DOUBLE_EQ(b->samples[0].value, 12.5);
  EXPECT_EQ(b->samples[0].time_ns, 1764410994000000000);
  ASSERT_EQ(b->samples[0].labels.size(), 2u);
  EXPECT_EQ(b->samples[0].labels[0].first, "gpu_uuid");  // Sorted.
}

TEST(IngestBatchTest, RejectsMalformedBatchesWithTheReason) {
  EXPECT_EQ(ParseIngestBatch("not json").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseIngestBatch(R"({"batch_id":"x","samples":[]})").status().code(),
            StatusCode::kInvalidArgument);
  StatusOr<IngestBatch> bad = ParseIngestBatch(
      R"({"host":"h","batch_id":"x","samples":[{"name":"a","value":"1","time_ns":1}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("samples[0]"), std::string::npos);
  EXPECT_FALSE(
      ParseIngestBatch(
          R"({"host":"h","batch_id":"x","samples":[{"name":"a","value":1,"time_ns":1.5}]})")
          .ok());
}

TEST(IngestBatchTest, LabelsAreSortedAndADuplicateIsRejected) {
  StatusOr<IngestBatch> b =
      ParseIngestBatch(R"({"host":"h","batch_id":"b","samples":[{"name":"m","value":2,"time_ns":5,)"
                       R"("labels":{"z":"1","a":"2","m":"3"}}]})");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const Labels want = {{"a", "2"}, {"m", "3"}, {"z", "1"}};
  EXPECT_EQ(b->samples[0].labels, want);
  EXPECT_EQ(b->samples[0].value, 2.0);
  StatusOr<IngestBatch> dup =
      ParseIngestBatch(R"({"host":"h","batch_id":"b","samples":[{"name":"m","value":2,"time_ns":5,)"
                       R"("labels":{"a":"1","a":"2"}}]})");
  EXPECT_EQ(dup.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dup.status().message().find("appears twice"), std::string::npos);
}

TEST(IngestBatchTest, IntegersMustBeExactAndValuesFinite) {
  auto parse = [](const std::string& sample) {
    return ParseIngestBatch(R"({"host":"h","batch_id":"b","samples":[)" + sample + "]}");
  };
  EXPECT_TRUE(parse(R"({"name":"m","value":1e300,"time_ns":1764410994000000001})").ok());
  EXPECT_EQ(parse(R"({"name":"m","value":1,"time_ns":1.5e18})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(parse(R"({"name":"m","value":"1","time_ns":5})").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(parse(R"({"name":"","value":1,"time_ns":5})").status().code(),
            StatusCode::kInvalidArgument);
  StatusOr<IngestBatch> exact = parse(R"({"name":"m","value":1,"time_ns":1764410994000000001})");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->samples[0].time_ns, 1764410994000000001);
  EXPECT_EQ(ParseIngestBatch("[1,2]").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseIngestBatch(R"({"host":"h","batch_id":"b","samples":[1]})").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(IngestBatchTest, GunzipRoundTripsAndCapsOutput) {
  const std::string text(100000, 'x');
  StatusOr<std::string> out = Gunzip(Gzip(text), 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, text);
  EXPECT_EQ(Gunzip(Gzip(text), 1000).status().code(), StatusCode::kResourceExhausted);
  const std::string gz = Gzip(text);
  EXPECT_FALSE(Gunzip(gz.substr(0, gz.size() / 2), 1 << 20).ok());
}

}  // namespace
}  // namespace vigil
