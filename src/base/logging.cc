// SPDX-License-Identifier: Apache-2.0
#include "base/logging.h"

#include <time.h>

#include <memory>
#include <string>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "base/log_text.h"

namespace vigil {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

spdlog::level::level_enum ToSpd(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
    case LogLevel::kOff:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

std::shared_ptr<spdlog::logger> MakeLogger(bool json) {
  auto logger =
      std::make_shared<spdlog::logger>("vigil", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (json) {
    logger->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":"%v"})",
                        spdlog::pattern_time_type::utc);
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %L %v");
  }
  logger->set_level(spdlog::level::trace);
  return logger;
}

spdlog::logger& Logger() {
  static std::shared_ptr<spdlog::logger> logger = MakeLogger(false);
  return *logger;
}

std::shared_ptr<spdlog::logger>& JsonLogger() {
  static std::shared_ptr<spdlog::logger> logger;
  return logger;
}

}  // namespace

void InitLogging(LogLevel level, bool json) {
  g_level.store(static_cast<int>(level));
  if (json && !JsonLogger()) {
    JsonLogger() = MakeLogger(true);
  }
}

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  if (text == "debug") {
    *level = LogLevel::kDebug;
  } else if (text == "info") {
    *level = LogLevel::kInfo;
  } else if (text == "warn" || text == "warning") {
    *level = LogLevel::kWarn;
  } else if (text == "error") {
    *level = LogLevel::kError;
  } else if (text == "off") {
    *level = LogLevel::kOff;
  } else {
    return false;
  }
  return true;
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void LogMessage(LogLevel level, const char* /*file*/, int /*line*/, std::string_view message) {
  if (auto& json = JsonLogger()) {
    json->log(ToSpd(level), "{}", EscapeLogText(message, /*json=*/true));
    return;
  }
  Logger().log(ToSpd(level), "{}", EscapeLogText(message, /*json=*/false));
}

int64_t LogMonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec;
}

}  // namespace vigil
