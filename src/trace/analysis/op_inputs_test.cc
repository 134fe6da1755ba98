// SPDX-License-Identifier: Apache-2.0
// The recorded inputs of cpu_ops: kept by the reader as text, shared between operators called
// alike, parsed into OpInputs on demand.
#include "trace/analysis/op_inputs.h"

#include <gtest/gtest.h>

#include "trace/reader/kineto_reader.h"
#include "trace/testing/trace_files.h"

namespace vigil::trace {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

TEST(ParseRecordedInputsTest, PyTorchArrays) {
  OpInputs in;
  ASSERT_TRUE(ParseRecordedInputs(R"([[2048, 768], [768], [], [[2, 3], [4]]])",
                                  R"(["c10::BFloat16", "float", "Scalar", "TensorList"])",
                                  R"([[768, 1], [1], [], [[3, 1], [1]]])",
                                  R"(["", "", "1", "[1, 2]"])", &in));
  ASSERT_EQ(in.dims.size(), 4u);
  EXPECT_EQ(in.dims[0], (std::vector<int64_t>{2048, 768}));
  EXPECT_EQ(in.dims[1], (std::vector<int64_t>{768}));
  EXPECT_TRUE(in.dims[2].empty());
  EXPECT_TRUE(in.dims[3].empty());  // a TensorList has no single shape
  EXPECT_EQ(in.types, (std::vector<std::string>{"c10::BFloat16", "float", "Scalar", "TensorList"}));
  EXPECT_EQ(in.strides[0], (std::vector<int64_t>{768, 1}));
  EXPECT_EQ(in.concrete, (std::vector<std::string>{"", "", "1", "[1, 2]"}));
}

TEST(ParseRecordedInputsTest, LiteralsEscapesAndAbsentArrays) {
  OpInputs in;
  ASSERT_TRUE(ParseRecordedInputs("[]", R"(["a\"b", ""])", "", R"([1, false, null, -2.5])", &in));
  EXPECT_TRUE(in.dims.empty());
  EXPECT_EQ(in.types, (std::vector<std::string>{"a\"b", ""}));
  EXPECT_TRUE(in.strides.empty());
  EXPECT_EQ(in.concrete, (std::vector<std::string>{"1", "false", "null", "-2.5"}));
}

TEST(ParseRecordedInputsTest, RejectsWhatIsNotAShapeList) {
  OpInputs in;
  EXPECT_FALSE(ParseRecordedInputs("[[1, x]]", "", "", "", &in));
  EXPECT_FALSE(ParseRecordedInputs("[[1, 2]", "", "", "", &in));
  EXPECT_FALSE(ParseRecordedInputs("[[1]] trailing", "", "", "", &in));
  EXPECT_FALSE(ParseRecordedInputs("", "[\"unterminated]", "", "", &in));
}

TEST(RecordedInputsTest, ReaderKeepsShapesOncePerDistinctCall) {
  constexpr std::string_view kArgs =
      R"("External id": 5, "Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"],)"
      R"( "Input Strides": [[32, 1], [16, 1]], "Concrete Inputs": ["", ""])";
  TraceBuilder b;
  b.Cpu("cpu_op", "aten::mm", 0, 10, 1, kArgs);
  b.Cpu("cpu_op", "aten::mm", 20, 10, 1, kArgs);
  b.Cpu("cpu_op", "aten::mm", 40, 10, 1, R"("Input Dims": [[8, 8], [8, 8]])");
  b.Cpu("cpu_op", "aten::relu", 60, 10, 1, R"("External id": 6)");
  b.Cpu("user_annotation", "step", 0, 100, 1, R"("Input Dims": [[1]])");
  TempDir dir;
  auto t = ReadTraceFile(dir.Write("t.json", b.Json()));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->op_shapes.size(), 2u);  // the two identical calls share one entry
  const EventTable& e = t->events;
  std::vector<uint32_t> mm;
  for (uint32_t i = 0; i < e.size(); ++i) {
    const std::string_view name = t->strings.Get(e.name[i]);
    if (name == "aten::mm") mm.push_back(i);
    if (name == "aten::relu" || name == "step") {
      EXPECT_EQ(e.shapes[i], kNoIndex) << name;
      EXPECT_FALSE(RecordedInputs(*t, i).has_value());
    }
  }
  ASSERT_EQ(mm.size(), 3u);
  EXPECT_EQ(e.shapes[mm[0]], e.shapes[mm[1]]);
  std::optional<OpInputs> in = RecordedInputs(*t, mm[0]);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->dims, (std::vector<std::vector<int64_t>>{{64, 32}, {32, 16}}));
  EXPECT_EQ(in->types, (std::vector<std::string>{"float", "float"}));
  EXPECT_EQ(in->strides, (std::vector<std::vector<int64_t>>{{32, 1}, {16, 1}}));
  EXPECT_EQ(in->concrete, (std::vector<std::string>{"", ""}));
  in = RecordedInputs(*t, mm[2]);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->dims, (std::vector<std::vector<int64_t>>{{8, 8}, {8, 8}}));
  EXPECT_TRUE(in->types.empty());
}

}  // namespace
}  // namespace vigil::trace
