// SPDX-License-Identifier: Apache-2.0
#include "rpc/framing.h"

#include <string>

#include <gtest/gtest.h>

namespace vigil {
namespace {

using std::string_literals::operator""s;

TEST(FramingTest, GetStatusRequestIsLittleEndianLengthThenJson) {
  StatusOr<std::string> frame = EncodeFrame(R"({"fn":"getStatus"})");
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(*frame, "\x12\x00\x00\x00{\"fn\":\"getStatus\"}"s);
}

TEST(FramingTest, StatusReplyBytes) {
  StatusOr<std::string> frame = EncodeFrame(R"({"status":1})");
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(*frame, "\x0c\x00\x00\x00{\"status\":1}"s);
}

TEST(FramingTest, LengthUsesAllFourBytes) {
  const std::string payload(0x010203, 'x');
  StatusOr<std::string> frame = EncodeFrame(payload);
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->substr(0, 4), "\x03\x02\x01\x00"s);
  EXPECT_EQ(DecodeFrameLength(frame->data()), 0x010203);
}

TEST(FramingTest, EmptyPayloadIsRejected) {
  EXPECT_EQ(EncodeFrame("").status().code(), StatusCode::kInvalidArgument);
}

TEST(FramingTest, PayloadOverLimitIsRejected) {
  EXPECT_EQ(EncodeFrame("12345", 4).status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(EncodeFrame("1234", 4).ok());
}

TEST(FramingTest, NegativeLengthDecodes) {
  EXPECT_EQ(DecodeFrameLength("\xff\xff\xff\xff"), -1);
  EXPECT_EQ(DecodeFrameLength("\xff\xff\xff\x7f"), 0x7fffffff);
}

TEST(FrameDecoderTest, AssemblesFramesFedOneByteAtATime) {
  const std::string stream = *EncodeFrame("{\"a\":1}") + *EncodeFrame("[2]");
  FrameDecoder decoder;
  std::vector<std::string> frames;
  for (char c : stream) {
    decoder.Append(std::string_view(&c, 1));
    for (;;) {
      auto next = decoder.Next();
      ASSERT_TRUE(next.ok());
      if (!next->has_value()) {
        break;
      }
      frames.push_back(**next);
    }
  }
  EXPECT_EQ(frames, (std::vector<std::string>{"{\"a\":1}", "[2]"}));
  EXPECT_FALSE(decoder.mid_frame());
}

TEST(FrameDecoderTest, SplitsSeveralFramesFromOneRead) {
  FrameDecoder decoder;
  decoder.Append(*EncodeFrame("one") + *EncodeFrame("two") + "\x05\x00"s);
  EXPECT_EQ(**decoder.Next(), "one");
  EXPECT_EQ(**decoder.Next(), "two");
  EXPECT_FALSE(decoder.Next()->has_value());
  EXPECT_TRUE(decoder.mid_frame());
}

TEST(FrameDecoderTest, ZeroAndNegativeLengthsFail) {
  for (const std::string& header : {"\x00\x00\x00\x00"s, "\xff\xff\xff\xff"s}) {
    FrameDecoder decoder;
    decoder.Append(header);
    auto next = decoder.Next();
    EXPECT_EQ(next.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(decoder.failed());
  }
}

TEST(FrameDecoderTest, HugeLengthFailsAtTheHeader) {
  FrameDecoder decoder(1024);
  decoder.Append("\xff\xff\xff\x7f"s);  // 2 GiB claimed, nothing sent.
  auto next = decoder.Next();
  EXPECT_EQ(next.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(next.status().message().find("2147483647"), std::string::npos);
}

TEST(FrameDecoderTest, FrameAtTheLimitIsAccepted) {
  FrameDecoder decoder(8);
  decoder.Append(*EncodeFrame("12345678"));
  auto next = decoder.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(**next, "12345678");
}

}  // namespace
}  // namespace vigil
