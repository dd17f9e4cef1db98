// A real redis-server for the queue tests: a free loopback port, a temporary data
// directory, AOF with appendfsync always (the configuration docs/queue.md requires).
// Killed by the destructor, and by the kernel if the test process dies (PDEATHSIG).
#pragma once
#include <sys/types.h>

#include <string>

namespace kz::testing {

class RedisServer {
 public:
  static bool Available();  // redis-server is on PATH
  RedisServer();            // picks the port and makes the directory; does not start
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // Starts redis-server on the same port and directory (so a restart keeps the AOF data)
  // and waits (<= 10 s) until it answers PING.
  bool Start(std::string* err);
  void Kill();  // SIGKILL and reap: a crash, not a clean shutdown

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }

 private:
  bool Ping() const;
  int port_ = 0;
  std::string dir_;
  pid_t pid_ = -1;
};

// A loopback port nothing listens on (bound and released).
int FreeLoopbackPort();

}  // namespace kz::testing
