// SPDX-License-Identifier: Apache-2.0
#include "profile/python_merge.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace vigil {
namespace {

ProfileFrame Native(const std::string& function, const std::string& module = "python3.11") {
  ProfileFrame f;
  f.function = function;
  f.module = module;
  return f;
}

PythonFrame Py(const std::string& function, int line, bool entry) {
  PythonFrame f;
  f.function = function;
  f.file = "/src/train.py";
  f.line = line;
  f.entry = entry;
  return f;
}

std::vector<std::string> Labels(const std::vector<ProfileFrame>& frames) {
  std::vector<std::string> out;
  for (const ProfileFrame& f : frames) {
    out.push_back(FrameLabel(f));
  }
  return out;
}

TEST(PythonMergeTest, EachEvalLoopFrameTakesOneRunInOrder) {
  // Leaf first: a C extension called from Python, itself called back into Python.
  std::vector<ProfileFrame> native = {Native("addmm", "libtorch.so"),
                                      Native("_PyEval_EvalFrameDefault"),
                                      Native("PyObject_Call"),
                                      Native("callback", "libext.so"),
                                      Native("_PyEval_EvalFrameDefault"),
                                      Native("Py_RunMain"),
                                      Native("main")};
  std::vector<PythonFrame> python = {Py("forward", 17, true), Py("train_step", 42, false),
                                     Py("<module>", 3, true)};

  std::vector<ProfileFrame> merged = MergePythonFrames(native, python, "python3.11");

  EXPECT_EQ(Labels(merged),
            (std::vector<std::string>{"addmm", "forward (train.py:17)", "PyObject_Call", "callback",
                                      "train_step (train.py:42)", "<module> (train.py:3)",
                                      "Py_RunMain", "main"}));
}

TEST(PythonMergeTest, WithoutEvalLoopFramesPythonGoesBelowTheExtensionFrames) {
  std::vector<ProfileFrame> native = {Native("hot_c", "libhot.so"),
                                      Native("ffi_call_unix64", "libffi.so.8"),
                                      Native("[unknown]", "python3.11")};
  std::vector<PythonFrame> python = {Py("spin", 9, false), Py("<module>", 20, true)};

  std::vector<ProfileFrame> merged = MergePythonFrames(native, python, "python3.11");

  EXPECT_EQ(Labels(merged),
            (std::vector<std::string>{"hot_c", "ffi_call_unix64", "spin (train.py:9)",
                                      "<module> (train.py:20)"}));
}

TEST(PythonMergeTest, NoPythonFramesLeavesTheNativeStack) {
  std::vector<ProfileFrame> native = {Native("a"), Native("b")};

  EXPECT_EQ(Labels(MergePythonFrames(native, {}, "python3.11")),
            (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace vigil
