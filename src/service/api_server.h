// The HTTP JSON API of `kz serve` (docs/api.md) on cpp-httplib. Handlers run on
// httplib's thread pool; none blocks except POST /v1/verify?wait=true and POST /v1/rewards,
// which wait on the scheduler's condition variable for at most `wait_timeout`.
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
  size_t max_body_bytes = 4u << 20;    // larger /v1/verify bodies: 413
  size_t max_batch_bytes = 64u << 20;  // larger /v1/batch bodies: 413
  size_t max_batch_samples = 1024;     // more samples in one batch: 413
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
  // Handlers, on httplib's threads.
  void PostVerify(const httplib::Request& req, httplib::Response& res);
  void PostBatch(const httplib::Request& req, httplib::Response& res);   // api_jobs.cc
  void GetJob(const httplib::Request& req, httplib::Response& res);      // api_jobs.cc
  void DeleteJob(const httplib::Request& req, httplib::Response& res);   // api_jobs.cc
  void PostRewards(const httplib::Request& req, httplib::Response& res); // api_rewards.cc
  Scheduler* scheduler_;
  ApiLimits limits_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace kz::service
