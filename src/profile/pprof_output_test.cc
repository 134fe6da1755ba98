// SPDX-License-Identifier: Apache-2.0
#include "profile/pprof_output.h"

#include <gtest/gtest.h>

#include "base/gzip.h"
#include "profile/pprof_profile.pb.h"

namespace vigil {
namespace {

TEST(PprofOutputTest, DecodesWithTheProtobufLibraryToTheSameStacks) {
  Profile profile;
  profile.info().frequency_hz = 100;
  profile.info().duration_ns = 2000000000;
  profile.info().start_unix_ns = 1700000000000000000;
  ProfileFrame main_frame;
  main_frame.function = "main";
  main_frame.module = "app";
  ProfileFrame py;
  py.kind = FrameKind::kPython;
  py.function = "step";
  py.file = "/srv/train.py";
  py.line = 42;
  py.module = "python3.11";
  const int a = profile.Intern(main_frame), b = profile.Intern(py);
  profile.Add({a, b}, 7);
  profile.Add({a}, 2);

  const std::string gz = WritePprof(profile);

  ASSERT_TRUE(IsGzip(gz));
  StatusOr<std::string> raw = Gunzip(gz, 1 << 20);
  ASSERT_TRUE(raw.ok());
  perftools::profiles::Profile decoded;
  ASSERT_TRUE(decoded.ParseFromString(*raw));
  auto str = [&](int64_t i) { return decoded.string_table(static_cast<int>(i)); };
  EXPECT_EQ(decoded.string_table(0), "");
  ASSERT_EQ(decoded.sample_type_size(), 2);
  EXPECT_EQ(str(decoded.sample_type(0).type()), "samples");
  EXPECT_EQ(str(decoded.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(decoded.period(), 10000000);
  EXPECT_EQ(decoded.duration_nanos(), 2000000000);
  EXPECT_EQ(decoded.time_nanos(), 1700000000000000000);
  ASSERT_EQ(decoded.sample_size(), 2);
  // Stacks are sorted by frame ids: {a} first, then {a, b}; locations leaf first.
  EXPECT_EQ(decoded.sample(0).location_id_size(), 1);
  EXPECT_EQ(decoded.sample(0).value(0), 2);
  const auto& s = decoded.sample(1);
  ASSERT_EQ(s.location_id_size(), 2);
  EXPECT_EQ(s.value(0), 7);
  EXPECT_EQ(s.value(1), 70000000);
  const auto& leaf = decoded.location(static_cast<int>(s.location_id(0) - 1));
  ASSERT_EQ(leaf.id(), s.location_id(0));
  ASSERT_EQ(leaf.line_size(), 1);
  EXPECT_EQ(leaf.line(0).line(), 42);
  const auto& fn = decoded.function(static_cast<int>(leaf.line(0).function_id() - 1));
  EXPECT_EQ(str(fn.name()), "step");
  EXPECT_EQ(str(fn.filename()), "/srv/train.py");
  const auto& mapping = decoded.mapping(static_cast<int>(leaf.mapping_id() - 1));
  EXPECT_EQ(str(mapping.filename()), "python3.11");
}

}  // namespace
}  // namespace vigil
