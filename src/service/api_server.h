// The HTTP JSON API of `kz serve` (docs/api.md) on cpp-httplib. Handlers run on
// httplib's thread pool; none blocks except POST /v1/verify?wait=true, which waits on the
// scheduler's condition variable for at most `wait_timeout`.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "service/scheduler.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace kz::service {

struct ApiLimits {
  size_t max_body_bytes = 4u << 20;  // larger bodies: 413
  std::chrono::milliseconds wait_timeout{std::chrono::minutes(10)};  // ?wait=true at most
};

class ApiServer {
 public:
  ApiServer(Scheduler* scheduler, ApiLimits limits);
  ~ApiServer();
  // Main thread: binds host:port; false with *err if that fails.
  bool Bind(const std::string& host, int port, std::string* err);
  // Main thread: serves until Stop(); returns after the listener closed.
  void Serve();
  // Any thread (the signal thread): stop accepting; Serve() returns.
  void Stop();

 private:
  void Routes();
  void PostVerify(const httplib::Request& req, httplib::Response& res);  // a handler thread
  Scheduler* scheduler_;
  ApiLimits limits_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace kz::service
