// A file descriptor with one owner, closed when the owner goes (ccache's `Fd`). Move-only.
// Thread-safety: as an int; a UniqueFd belongs to one thread at a time. After fork() the
// child must not rely on the destructor (it execs or _exits): it closes by hand.
#pragma once
#include <unistd.h>

#include <utility>

namespace kz::util {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}  // takes ownership; -1 (a failed call) is empty
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(other.Release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }  // -1 when empty
  bool valid() const { return fd_ >= 0; }
  // Gives the fd up without closing it; this is empty afterwards.
  int Release() { return std::exchange(fd_, -1); }
  // Closes the fd held (if any) and holds `fd` instead.
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace kz::util
