// SPDX-License-Identifier: Apache-2.0
// Logging macros over spdlog (spdlog is only included by logging.cc). Messages are lowercase
// followed by key=value pairs: VIGIL_LOG_WARN("collector failed: collector={} err={}", n, e).
// WARN lines on hot paths go through VIGIL_LOG_EVERY_N_SEC. Output goes to stderr. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

namespace vigil {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Configures the process-wide logger. `json` switches to one JSON object per line.
void InitLogging(LogLevel level, bool json = false);
// Parses "debug", "info", "warn", "error", "off".
bool ParseLogLevel(std::string_view text, LogLevel* level);
bool LogEnabled(LogLevel level);
void LogMessage(LogLevel level, const char* file, int line, std::string_view message);
int64_t LogMonotonicSeconds();

}  // namespace vigil

#define VIGIL_LOG(level, ...)                                                   \
  do {                                                                          \
    if (::vigil::LogEnabled(level)) {                                           \
      ::vigil::LogMessage(level, __FILE__, __LINE__, fmt::format(__VA_ARGS__)); \
    }                                                                           \
  } while (false)

#define VIGIL_LOG_DEBUG(...) VIGIL_LOG(::vigil::LogLevel::kDebug, __VA_ARGS__)
#define VIGIL_LOG_INFO(...) VIGIL_LOG(::vigil::LogLevel::kInfo, __VA_ARGS__)
#define VIGIL_LOG_WARN(...) VIGIL_LOG(::vigil::LogLevel::kWarn, __VA_ARGS__)
#define VIGIL_LOG_ERROR(...) VIGIL_LOG(::vigil::LogLevel::kError, __VA_ARGS__)

// Logs at most once every `seconds` from this call site. level is DEBUG, INFO, WARN or ERROR.
#define VIGIL_LOG_EVERY_N_SEC(level, seconds, ...)                                  \
  do {                                                                              \
    static std::atomic<int64_t> vigil_log_last_{-1000000};                          \
    const int64_t vigil_log_now_ = ::vigil::LogMonotonicSeconds();                  \
    int64_t vigil_log_prev_ = vigil_log_last_.load(std::memory_order_relaxed);      \
    if (vigil_log_now_ - vigil_log_prev_ >= (seconds) &&                            \
        vigil_log_last_.compare_exchange_strong(vigil_log_prev_, vigil_log_now_)) { \
      VIGIL_LOG_##level(__VA_ARGS__);                                               \
    }                                                                               \
  } while (false)

// Invariant checks. VIGIL_CHECK stays in release builds; never check what the host controls.
#define VIGIL_CHECK(cond)                                                                         \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      ::vigil::LogMessage(::vigil::LogLevel::kError, __FILE__, __LINE__, "check failed: " #cond); \
      __builtin_trap();                                                                           \
    }                                                                                             \
  } while (false)

#ifdef NDEBUG
#define VIGIL_DCHECK(cond) \
  do {                     \
  } while (false)
#else
#define VIGIL_DCHECK(cond) VIGIL_CHECK(cond)
#endif
