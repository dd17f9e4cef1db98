// Waiting for a process to end without polling: its pidfd turns readable when it exits.
#pragma once
#include <poll.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace kz::testing_support {

// Up to `timeout_ms` for process `pid` (any process, not only a child) to end; true if it
// has (or was gone already).
inline bool ProcessEnds(pid_t pid, int timeout_ms) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  bool ended = ::poll(&p, 1, timeout_ms) == 1;
  ::close(fd);
  return ended;
}

}  // namespace kz::testing_support
