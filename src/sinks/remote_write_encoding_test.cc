// SPDX-License-Identifier: Apache-2.0
#include "sinks/remote_write_encoding.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "base/file_util.h"

namespace vigil {
namespace {

std::vector<RwTimeSeries> TinyRequest() {
  return {RwTimeSeries{{{"__name__", "up"}, {"job_id", "a"}}, {RwSample{1.0, 1000}}}};
}

// The bytes of WriteRequest{timeseries: [{labels: [__name__=up, job_id=a],
// samples: [{value: 1.0, timestamp: 1000}]}]}, worked out by hand from the protobuf spec.
const unsigned char kTinyGolden[] = {
    0x0a, 0x2b,                                                 // timeseries, 43 bytes
    0x0a, 0x0e,                                                 //   labels, 14 bytes
    0x0a, 0x08, '_',  '_',  'n',  'a',  'm',  'e',  '_',  '_',  //     name "__name__"
    0x12, 0x02, 'u',  'p',                                      //     value "up"
    0x0a, 0x0b,                                                 //   labels, 11 bytes
    0x0a, 0x06, 'j',  'o',  'b',  '_',  'i',  'd',              //     name "job_id"
    0x12, 0x01, 'a',                                            //     value "a"
    0x12, 0x0c,                                                 //   samples, 12 bytes
    0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,       //     value 1.0 (fixed64)
    0x10, 0xe8, 0x07,                                           //     timestamp 1000 (varint)
};

TEST(RemoteWriteEncodingTest, TinyRequestMatchesGoldenBytes) {
  std::string out;
  EncodeWriteRequest(TinyRequest(), &out);
  EXPECT_EQ(out, std::string(reinterpret_cast<const char*>(kTinyGolden), sizeof(kTinyGolden)));
}

TEST(RemoteWriteEncodingTest, EmptyRequestIsEmptyMessage) {
  std::string out;
  EncodeWriteRequest({}, &out);
  EXPECT_TRUE(out.empty());
}

TEST(RemoteWriteEncodingTest, DecodeInvertsEncodeIncludingNegativeTimesAndStaleNaN) {
  std::vector<RwTimeSeries> in = {
      RwTimeSeries{{{"__name__", "vigil_gpu_busy_seconds_total"}, {"gpu_uuid", "GPU-1"}},
                   {RwSample{0, 0}, RwSample{-2.5, -1}, RwSample{StaleNaN(), 1764410994123}}},
      RwTimeSeries{{{"__name__", std::string(300, 'x')}, {"v", std::string(70000, 'y')}},
                   {RwSample{1e300, 9223372036854775807}}},
  };
  std::string bytes;
  EncodeWriteRequest(in, &bytes);
  StatusOr<std::vector<RwTimeSeries>> out = DecodeWriteRequest(bytes);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, in);
  EXPECT_TRUE(IsStaleNaN((*out)[0].samples[2].value));
}

TEST(RemoteWriteEncodingTest, StaleNaNHasPrometheusBitPattern) {
  EXPECT_EQ(std::bit_cast<uint64_t>(StaleNaN()), 0x7ff0000000000002ULL);
  EXPECT_TRUE(std::isnan(StaleNaN()));
  EXPECT_FALSE(IsStaleNaN(std::nan("")));
}

TEST(RemoteWriteEncodingTest, TruncatedInputIsDataLoss) {
  std::string bytes;
  EncodeWriteRequest(TinyRequest(), &bytes);
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    StatusOr<std::vector<RwTimeSeries>> out = DecodeWriteRequest(bytes.substr(0, cut));
    EXPECT_FALSE(out.ok()) << "cut at " << cut;
  }
}

TEST(RemoteWriteEncodingTest, UnknownFieldsAreSkipped) {
  std::string bytes;
  EncodeWriteRequest(TinyRequest(), &bytes);
  // Field 3 (varint 150) and field 4 (bytes "zz") appended at the top level.
  bytes += std::string("\x18\x96\x01\x22\x02zz", 7);
  StatusOr<std::vector<RwTimeSeries>> out = DecodeWriteRequest(bytes);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, TinyRequest());
}

TEST(RemoteWriteEncodingTest, SnappyRoundTripsAndRejectsGarbage) {
  const std::string data = std::string(10000, 'a') + "tail";
  const std::string compressed = SnappyCompress(data);
  EXPECT_LT(compressed.size(), data.size() / 10);
  StatusOr<std::string> back = SnappyUncompress(compressed);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, data);
  EXPECT_EQ(SnappyUncompress("\x05garbage-that-is-not-snappy").status().code(),
            StatusCode::kDataLoss);
  // A header claiming 4 GiB is refused before anything is allocated.
  EXPECT_EQ(SnappyUncompress("\xff\xff\xff\xff\x0fgarbage").status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(SnappyUncompress(compressed, 100).status().code(), StatusCode::kResourceExhausted);
}

// Runs `command` with `input` on stdin; returns its stdout, or nullopt when it could not run.
std::optional<std::string> RunWithInput(const std::string& command, const std::string& input,
                                        int* exit_code) {
  char dir_templ[] = "/tmp/rwenc-XXXXXX";
  if (mkdtemp(dir_templ) == nullptr) {
    return std::nullopt;
  }
  const std::string dir = dir_templ;
  const std::string in_path = dir + "/in.bin";
  if (!WriteFileAtomic(in_path, input).ok()) {
    return std::nullopt;
  }
  const std::string full = command + " < " + in_path + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) {
    return std::nullopt;
  }
  std::string out;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) {
    out.append(buf, n);
  }
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  unlink(in_path.c_str());
  rmdir(dir.c_str());
  return out;
}

bool HaveProtoc() { return system("command -v protoc >/dev/null 2>&1") == 0; }

TEST(RemoteWriteEncodingTest, ProtocDecodeRawAcceptsTheBytes) {
  if (!HaveProtoc()) {
    GTEST_SKIP() << "protoc not installed (Debian package protobuf-compiler)";
  }
  std::string bytes;
  EncodeWriteRequest(TinyRequest(), &bytes);
  int code = -1;
  std::optional<std::string> out = RunWithInput("protoc --decode_raw", bytes, &code);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(code, 0) << *out;
  EXPECT_EQ(*out,
            "1 {\n"
            "  1 {\n    1: \"__name__\"\n    2: \"up\"\n  }\n"
            "  1 {\n    1: \"job_id\"\n    2: \"a\"\n  }\n"
            "  2 {\n    1: 0x3ff0000000000000\n    2: 1000\n  }\n"
            "}\n");
}

TEST(RemoteWriteEncodingTest, ProtocDecodesWithTheRemoteWriteSchema) {
  if (!HaveProtoc()) {
    GTEST_SKIP() << "protoc not installed (Debian package protobuf-compiler)";
  }
  std::vector<RwTimeSeries> in = TinyRequest();
  in.push_back(RwTimeSeries{{{"__name__", "g"}, {"host", "h1"}},
                            {RwSample{-0.5, 1764410994123}, RwSample{2, 1764410995123}}});
  std::string bytes;
  EncodeWriteRequest(in, &bytes);
  const std::string schema_dir = std::string(VIGIL_TEST_DATA_DIR) + "/remote_write";
  int code = -1;
  std::optional<std::string> out = RunWithInput(
      "protoc --proto_path=" + schema_dir + " --decode=prometheus.WriteRequest remote_write.proto",
      bytes, &code);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(code, 0) << *out;
  EXPECT_NE(out->find("labels {\n    name: \"__name__\"\n    value: \"up\"\n  }"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("samples {\n    value: 1\n    timestamp: 1000\n  }"), std::string::npos)
      << *out;
  EXPECT_NE(out->find("samples {\n    value: -0.5\n    timestamp: 1764410994123\n  }"),
            std::string::npos)
      << *out;
  EXPECT_NE(out->find("value: \"h1\""), std::string::npos) << *out;
}

}  // namespace
}  // namespace vigil
