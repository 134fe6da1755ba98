// SPDX-License-Identifier: Apache-2.0
#include "ipc/wire_format.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

// Builds bytes from the spec by hand (little-endian x86-64/aarch64 layout), independent of the
// encoder under test.
std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) {
    out.push_back(static_cast<char>(v));
  }
  return out;
}

std::string Le64(uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  return out;
}

std::string Le32(uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  return out;
}

std::string TypeField(const std::string& type) {
  return type + std::string(32 - type.size(), '\0');
}

TEST(WireFormatTest, KinetoPollRequestMatchesGoldenBytes) {
  // Metadata{size=24, type="req"} + LibkinetoRequest{type=2, n=2, jobid=4242, pids={100, 1}}.
  const std::string golden =
      Le64(24) + TypeField("req") + Le32(2) + Le32(2) + Le64(4242) + Le32(100) + Le32(1);
  ASSERT_EQ(golden.size(), 40u + 16u + 8u);

  auto encoded = EncodeIpcMessage("req", EncodeKinetoRequestPayload({2, 4242, {100, 1}}));
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, golden);

  auto message = DecodeIpcMessage(golden);
  ASSERT_TRUE(message.ok()) << message.status().ToString();
  EXPECT_EQ(message->type, "req");
  auto request = DecodeKinetoRequestPayload(message->payload);
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->config_type, 2);
  EXPECT_EQ(request->job_id, 4242);
  EXPECT_EQ(request->pids, (std::vector<int32_t>{100, 1}));
}

TEST(WireFormatTest, KinetoContextMatchesGoldenBytes) {
  const std::string golden = Le64(16) + TypeField("ctxt") + Le32(3) + Le32(777) + Le64(0);
  auto encoded = EncodeIpcMessage("ctxt", EncodeKinetoContextPayload({3, 777, 0}));
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, golden);
  auto message = DecodeIpcMessage(golden);
  ASSERT_TRUE(message.ok());
  auto context = DecodeKinetoContextPayload(message->payload);
  ASSERT_TRUE(context.ok());
  EXPECT_EQ(*context, (KinetoContext{3, 777, 0}));
}

TEST(WireFormatTest, ConfigReplyIsStringPayloadOfTypeReq) {
  const std::string config = "ACTIVITIES_DURATION_MSECS=500\n";
  const std::string golden = Le64(config.size()) + TypeField("req") + config;
  auto encoded = EncodeIpcMessage("req", config);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, golden);
}

TEST(WireFormatTest, EmptyConfigReplyIsHeaderOnly) {
  auto encoded = EncodeIpcMessage("req", "");
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, Le64(0) + TypeField("req"));
}

TEST(WireFormatTest, ContextReplyIsOneInt32) {
  EXPECT_EQ(EncodeContextReplyPayload(5), Bytes({5, 0, 0, 0}));
  auto count = DecodeContextReplyPayload(Bytes({0xff, 0xff, 0xff, 0xff}));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, -1);
  EXPECT_FALSE(DecodeContextReplyPayload("abc").ok());
}

struct BadDatagram {
  const char* name;
  std::string bytes;
  StatusCode code;
};

TEST(WireFormatTest, RejectsMalformedDatagrams) {
  const std::vector<BadDatagram> cases = {
      {"empty", "", StatusCode::kInvalidArgument},
      {"short header", std::string(39, '\0'), StatusCode::kInvalidArgument},
      {"size larger than payload", Le64(10) + TypeField("req") + "abc",
       StatusCode::kInvalidArgument},
      {"size smaller than payload", Le64(1) + TypeField("req") + "abc",
       StatusCode::kInvalidArgument},
      {"huge size", Le64(~uint64_t{0}) + TypeField("req"), StatusCode::kResourceExhausted},
      {"size above cap",
       Le64(kIpcMaxPayloadBytes + 1) + TypeField("req") + std::string(kIpcMaxPayloadBytes + 1, 'x'),
       StatusCode::kResourceExhausted},
      {"type without NUL", Le64(0) + std::string(32, 'a'), StatusCode::kInvalidArgument},
      {"empty type", Le64(0) + std::string(32, '\0'), StatusCode::kInvalidArgument},
      {"non-printable type", Le64(0) + TypeField("r\x01q"), StatusCode::kInvalidArgument},
  };
  for (const auto& c : cases) {
    auto decoded = DecodeIpcMessage(c.bytes);
    ASSERT_FALSE(decoded.ok()) << c.name;
    EXPECT_EQ(decoded.status().code(), c.code) << c.name << ": " << decoded.status().ToString();
  }
}

struct BadRequest {
  const char* name;
  std::string payload;
};

TEST(WireFormatTest, RejectsRequestsWhoseSizeDisagreesWithN) {
  const std::vector<BadRequest> cases = {
      {"too short", Le32(2) + Le32(1)},
      {"n zero", Le32(2) + Le32(0) + Le64(1)},
      {"n negative", Le32(2) + Le32(0xffffffff) + Le64(1)},
      {"n huge", Le32(2) + Le32(0x7fffffff) + Le64(1) + Le32(5)},
      {"n above cap", Le32(2) + Le32(kKinetoMaxPids + 1) + Le64(1) +
                          std::string(4 * (kKinetoMaxPids + 1), '\x01')},
      {"missing pid", Le32(2) + Le32(2) + Le64(1) + Le32(5)},
      {"extra bytes", Le32(2) + Le32(1) + Le64(1) + Le32(5) + "x"},
      {"zero pid", Le32(2) + Le32(1) + Le64(1) + Le32(0)},
      {"negative pid", Le32(2) + Le32(1) + Le64(1) + Le32(0xfffffffe)},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(DecodeKinetoRequestPayload(c.payload).ok()) << c.name;
  }
  // 16 + 4n exactly is accepted.
  EXPECT_TRUE(DecodeKinetoRequestPayload(Le32(2) + Le32(1) + Le64(1) + Le32(5)).ok());
}

TEST(WireFormatTest, RejectsContextOfWrongSize) {
  EXPECT_FALSE(DecodeKinetoContextPayload(std::string(15, '\x01')).ok());
  EXPECT_FALSE(DecodeKinetoContextPayload(std::string(17, '\x01')).ok());
  EXPECT_FALSE(DecodeKinetoContextPayload(Le32(0) + Le32(0) + Le64(0)).ok());  // pid 0
}

TEST(WireFormatTest, EncoderRefusesBadTypesAndHugePayloads) {
  EXPECT_FALSE(EncodeIpcMessage("", "").ok());
  EXPECT_FALSE(EncodeIpcMessage(std::string(32, 'a'), "").ok());
  EXPECT_TRUE(EncodeIpcMessage(std::string(31, 'a'), "").ok());
  EXPECT_EQ(EncodeIpcMessage("req", std::string(kIpcMaxPayloadBytes + 1, 'x')).status().code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace vigil
