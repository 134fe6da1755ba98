// SPDX-License-Identifier: Apache-2.0
// Puts Python frames where the interpreter runs them in a native stack. Each native call of
// the eval loop (_PyEval_EvalFrameDefault; PyEval_EvalFrameEx in older builds)
// executes a run of Python frames: from the frame it was entered with (is_entry in 3.11, a shim
// frame below it in 3.12+) to the innermost one it is running. The leaf-most eval-loop native frame
// is replaced by the leaf-most run, the next by the next, in order, as py-spy's --native does. When
// the native unwind never reached an eval-loop frame (an interpreter built without frame pointers
// and no DWARF unwinding), the whole Python stack goes below the native frames that lie outside the
// interpreter, so the stack still reads root -> Python -> native leaf. Stateless.
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"

namespace vigil {

struct PythonFrame {
  std::string function;  // co_qualname in 3.11+ when present, else co_name.
  std::string file;      // co_filename.
  int line = 0;
  bool entry = false;  // The first Python frame of its eval-loop call (the run's root).
};

// True for the native frames that run Python code (the eval loop).
bool IsEvalLoopFrame(const ProfileFrame& frame);

// `native` and `python` are leaf first; so is the result. `interpreter_module` is the module
// (basename) holding the eval loop ("python3.11", "libpython3.11.so.1.0"), used by the
// fallback to know which native frames belong to the interpreter.
std::vector<ProfileFrame> MergePythonFrames(const std::vector<ProfileFrame>& native,
                                            const std::vector<PythonFrame>& python,
                                            const std::string& interpreter_module);

}  // namespace vigil
