// SIGINT/SIGTERM for the long-running services (kz serve, kz worker): the handler only
// writes a byte to a pipe (async-signal-safe); a thread of its own reads it and runs
// `on_stop` once. One instance per process.
#pragma once
#include <functional>
#include <thread>

namespace kz::cli {

class StopSignals {
 public:
  // Installs the handlers and starts the thread; throws std::runtime_error if no pipe.
  explicit StopSignals(std::function<void()> on_stop);
  // Wakes the thread (running `on_stop` if no signal came: the service stopped by itself)
  // and joins it.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  std::thread thread_;
};

}  // namespace kz::cli
