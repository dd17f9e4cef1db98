#include "cli/stop_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace kz::cli {
namespace {
int g_signal_pipe[2] = {-1, -1};  // written by the handler, read by the thread

void OnSignal(int) {
  char c = 1;
  [[maybe_unused]] auto n = write(g_signal_pipe[1], &c, 1);
}
}  // namespace

StopSignals::StopSignals(std::function<void()> on_stop) {
  if (pipe2(g_signal_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  thread_ = std::thread([stop = std::move(on_stop)] {
    char c;
    while (read(g_signal_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    stop();
  });
}

StopSignals::~StopSignals() {
  OnSignal(0);
  thread_.join();
}

}  // namespace kz::cli
