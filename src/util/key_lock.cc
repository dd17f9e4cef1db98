#include "util/key_lock.h"

#include <fcntl.h>
#include <cerrno>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "util/fs.h"

namespace kz::util {

std::optional<KeyLock> KeyLock::TryAcquire(const std::string& path, bool* busy, bool keep_file) {
  *busy = false;
  std::string err;
  if (!MakeDirs(std::filesystem::path(path).parent_path().string(), &err)) return std::nullopt;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return std::nullopt;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    *busy = errno == EWOULDBLOCK;
    ::close(fd);
    return std::nullopt;
  }
  return KeyLock(fd, path, keep_file);
}

KeyLock& KeyLock::operator=(KeyLock&& o) noexcept {
  if (this != &o) {
    Release();
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    keep_ = o.keep_;
    o.fd_ = -1;
  }
  return *this;
}

void KeyLock::Release() {
  if (fd_ < 0) return;
  if (!keep_) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace kz::util
