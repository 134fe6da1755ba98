// SPDX-License-Identifier: Apache-2.0
// The alternate screen with the cursor hidden, and optionally the keyboard in no-echo,
// key-at-a-time mode so `q` (or Ctrl-C read as a key) can stop a live view; all undone on
// destruction. Shared by the live views (`vigil top`, `vigil snoop`); `vigil top` also reads
// single keys (sorting, help) and `vigil metrics` the width.
#pragma once

#include <termios.h>

#include <string>

namespace vigil {

class TerminalScreen {
 public:
  // `keyboard`: also take the keyboard (not when a traced command may read the terminal).
  explicit TerminalScreen(bool keyboard = true);
  ~TerminalScreen();
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;

  // Clears the screen and writes `frame` from the top left.
  void Draw(const std::string& frame) const;
  // True when a quit key arrives within `timeout_ms` (0: never blocks). Without the keyboard it
  // waits the whole timeout and returns false.
  bool QuitKeyWithin(int timeout_ms) const;
  // The next key pressed within `timeout_ms` (0: never blocks), or -1 when none arrives or there
  // is no keyboard (then the whole timeout is waited).
  int KeyWithin(int timeout_ms) const;
  // Columns of the terminal on stdout, 0 when unknown.
  static int Width();
  bool has_keyboard() const { return keyboard_; }

 private:
  bool keyboard_ = false;
  termios saved_{};
};

}  // namespace vigil
