// SPDX-License-Identifier: Apache-2.0
#include "profile/python_merge.h"

#include <cstddef>

namespace vigil {
namespace {

ProfileFrame ToProfileFrame(const PythonFrame& frame, const std::string& module) {
  ProfileFrame out;
  out.kind = FrameKind::kPython;
  out.function = frame.function;
  out.file = frame.file;
  out.line = frame.line;
  out.module = module;
  return out;
}

}  // namespace

bool IsEvalLoopFrame(const ProfileFrame& frame) {
  return frame.kind == FrameKind::kNative &&
         (frame.function == "_PyEval_EvalFrameDefault" || frame.function == "PyEval_EvalFrameEx");
}

std::vector<ProfileFrame> MergePythonFrames(const std::vector<ProfileFrame>& native,
                                            const std::vector<PythonFrame>& python,
                                            const std::string& interpreter_module) {
  if (python.empty()) {
    return native;
  }
  // Runs of Python frames, leaf first, each ending at its entry frame.
  std::vector<std::vector<const PythonFrame*>> runs(1);
  for (const PythonFrame& frame : python) {
    runs.back().push_back(&frame);
    if (frame.entry) {
      runs.emplace_back();
    }
  }
  if (runs.back().empty()) {
    runs.pop_back();
  }
  size_t eval_frames = 0;
  for (const ProfileFrame& frame : native) {
    eval_frames += IsEvalLoopFrame(frame) ? 1 : 0;
  }
  std::vector<ProfileFrame> out;
  if (eval_frames == 0) {
    // Native frames up to the first interpreter frame, then every Python frame.
    size_t i = 0;
    while (i < native.size() && native[i].module != interpreter_module) {
      out.push_back(native[i++]);
    }
    for (const PythonFrame& frame : python) {
      out.push_back(ToProfileFrame(frame, interpreter_module));
    }
    return out;
  }
  size_t run = 0;
  for (const ProfileFrame& frame : native) {
    if (!IsEvalLoopFrame(frame)) {
      out.push_back(frame);
      continue;
    }
    if (run < runs.size()) {
      for (const PythonFrame* py : runs[run]) {
        out.push_back(ToProfileFrame(*py, frame.module));
      }
      ++run;
    }
    // An eval-loop frame with no run left (a frame being set up) is dropped: it carries no
    // Python code yet.
  }
  // Runs the native unwind did not reach (it stopped early) still belong at the root.
  for (; run < runs.size(); ++run) {
    for (const PythonFrame* py : runs[run]) {
      out.push_back(ToProfileFrame(*py, interpreter_module));
    }
  }
  return out;
}

}  // namespace vigil
