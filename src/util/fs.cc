#include "util/fs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kz::util {
namespace fs = std::filesystem;

bool ReadFile(const std::string& path, std::string* out, std::string* err) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    *err = path + ": is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool WriteFileAtomic(const std::string& path, const std::string& data, std::string* err) {
  // Unique per process and per call: threads of one process (the build driver's) may write
  // the same path at once; each writes its own temporary and the last rename wins whole.
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = tmp + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    *err = tmp + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = path + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool MakeDirs(const std::string& path, std::string* err) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (fs::is_directory(path)) return true;
  *err = path + ": " + (ec ? ec.message() : "not a directory");
  return false;
}

std::string MakeTempDir(const std::string& parent, const std::string& prefix, std::string* err) {
  if (!MakeDirs(parent, err)) return "";
  std::string templ = parent + "/" + prefix + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    *err = templ + ": " + std::strerror(errno);
    return "";
  }
  return templ;
}

void RemoveAll(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  auto p = fs::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace kz::util
