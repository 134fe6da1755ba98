// SPDX-License-Identifier: Apache-2.0
#include "cli/terminal_screen.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace vigil {

TerminalScreen::TerminalScreen(bool keyboard) {
  keyboard_ = keyboard && isatty(STDIN_FILENO) != 0 && tcgetattr(STDIN_FILENO, &saved_) == 0;
  if (keyboard_) {
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }
  std::fputs("\x1b[?1049h\x1b[?25l", stdout);
  std::fflush(stdout);
}

TerminalScreen::~TerminalScreen() {
  std::fputs("\x1b[?25h\x1b[?1049l", stdout);
  std::fflush(stdout);
  if (keyboard_) {
    tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
}

void TerminalScreen::Draw(const std::string& frame) const {
  const std::string text = "\x1b[H\x1b[2J" + frame;
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

int TerminalScreen::KeyWithin(int timeout_ms) const {
  if (!keyboard_) {
    if (timeout_ms > 0) poll(nullptr, 0, timeout_ms);
    return -1;
  }
  pollfd pfd{STDIN_FILENO, POLLIN, 0};
  unsigned char c = 0;
  if (poll(&pfd, 1, timeout_ms) > 0 && read(STDIN_FILENO, &c, 1) == 1) {
    return c;
  }
  return -1;
}

bool TerminalScreen::QuitKeyWithin(int timeout_ms) const {
  const int c = KeyWithin(timeout_ms);
  return c == 'q' || c == 'Q' || c == 3;
}

int TerminalScreen::Width() {
  winsize ws{};
  return ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 0;
}

}  // namespace vigil
