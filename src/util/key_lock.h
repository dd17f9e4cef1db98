// An exclusive, non-blocking lock on a file, between threads and processes alike (flock on
// an open file of its own). Used for "one build of a cache key at a time": whoever cannot
// take it waits for the holder's result instead of doing the same work.
#pragma once
#include <optional>
#include <string>

namespace kz::util {

class KeyLock {
 public:
  // The lock on `path` (its directory is created), or nullopt: *busy true when another
  // holder has it, false when the file cannot be made or opened (a read-only directory:
  // the caller then proceeds unlocked).
  // `keep_file`: the file stays when released (a lock on a long-lived directory, such as a
  // run directory: with the file never removed, two holders can never lock two inodes).
  static std::optional<KeyLock> TryAcquire(const std::string& path, bool* busy, bool keep_file = false);
  KeyLock(KeyLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)), keep_(o.keep_) { o.fd_ = -1; }
  KeyLock& operator=(KeyLock&& o) noexcept;
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;
  // Removes the file, then releases: a waiter that opened the old file and locks it after
  // this must look the result up again (it is published by then), as TryAcquire's callers do.
  ~KeyLock() { Release(); }

 private:
  KeyLock(int fd, std::string path, bool keep) : fd_(fd), path_(std::move(path)), keep_(keep) {}
  void Release();
  int fd_ = -1;
  std::string path_;
  bool keep_ = false;
};

}  // namespace kz::util
