#include "queue/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "util/fs.h"

namespace kz::testing {
namespace {

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

}  // namespace

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

bool RedisServer::Available() {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= p.size();) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    if (::access((p.substr(start, end - start) + "/redis-server").c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

RedisServer::RedisServer() : port_(FreeLoopbackPort()) {
  std::string err;
  dir_ = util::MakeTempDir(std::filesystem::temp_directory_path().string(), "kz-redis-", &err);
}

RedisServer::~RedisServer() {
  Kill();
  if (!dir_.empty()) util::RemoveAll(dir_);
}

bool RedisServer::Ping() const {
  int fd = Connect(port_);
  if (fd < 0) return false;
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[64] = {};
  bool ok = ::write(fd, "PING\r\n", 6) == 6 && ::read(fd, buf, sizeof buf - 1) > 0 && std::strncmp(buf, "+PONG", 5) == 0;
  ::close(fd);
  return ok;
}

bool RedisServer::Start(std::string* err) {
  if (dir_.empty() || port_ == 0) return *err = "no temp dir or port for redis-server", false;
  std::vector<std::string> args{"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                "--dir", dir_, "--appendonly", "yes", "--appendfsync", "always",
                                "--save", "", "--daemonize", "no", "--logfile", dir_ + "/redis.log"};
  pid_ = ::fork();
  if (pid_ < 0) return *err = "fork failed", false;
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp("redis-server", argv.data());
    ::_exit(127);
  }
  for (int i = 0; i < 200; ++i) {
    if (Ping()) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return *err = "redis-server exited at start (see " + dir_ + "/redis.log)", false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return *err = "redis-server did not answer PING within 10 s", false;
}

void RedisServer::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace kz::testing
