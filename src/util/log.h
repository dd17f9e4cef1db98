// Minimal leveled logging to stderr. Thread-safe (one write per line).
#pragma once
#include <string_view>

namespace kz::util {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kQuiet = 4 };

// Messages below this level are dropped. Default kInfo; set once at startup.
void SetLogLevel(LogLevel level);
void Log(LogLevel level, std::string_view message);

inline void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m); }
inline void LogWarn(std::string_view m) { Log(LogLevel::kWarn, m); }
inline void LogDebug(std::string_view m) { Log(LogLevel::kDebug, m); }

}  // namespace kz::util
