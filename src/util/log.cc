#include "util/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace kz::util {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
const char* Name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kQuiet: return "quiet";
  }
  return "?";
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }

void Log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < g_level.load()) return;
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char head[64];
  std::snprintf(head, sizeof head, "[kz %02d:%02d:%02d.%03lldZ %s] ", tm.tm_hour, tm.tm_min,
                tm.tm_sec, static_cast<long long>(ms % 1000), Name(level));
  std::string line = head;
  line.append(message);
  line.push_back('\n');
  ssize_t rc = ::write(STDERR_FILENO, line.data(), line.size());
  (void)rc;
}

}  // namespace kz::util
