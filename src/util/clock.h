#pragma once

#include <chrono>
#include <cstdint>

namespace kz::util {

// Milliseconds since the Unix epoch (wall clock: for timestamps that are stored or shown,
// not for measuring durations).
inline int64_t UnixMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace kz::util
