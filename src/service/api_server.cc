#include "service/api_server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

#include "service/api_json.h"
#include "util/log.h"

namespace kz::service {
using nlohmann::json;
using api::Error;
using api::Reply;

namespace {
constexpr size_t kHandlerThreads = 64;
constexpr int kListenBacklog = 1024;  // httplib 0.11 listens with a backlog of 5
// httplib closes a keep-alive connection after 5 requests by default: a client submitting
// thousands of samples would reconnect (and queue for a handler thread) every 5.
constexpr size_t kKeepAliveMaxRequests = 10000;

const char* DefaultReason(int status) {
  switch (status) {
    case 404: return "no such endpoint";
    case 413: return "request body too large";
    case 405: return "method not allowed";
    default: return "bad request";
  }
}
}  // namespace

ApiServer::ApiServer(Scheduler* scheduler, ApiLimits limits)
    : scheduler_(scheduler), limits_(limits), http_(std::make_unique<httplib::Server>()) {
  http_->set_payload_max_length(std::max(limits_.max_body_bytes, limits_.max_batch_bytes));
  // ?wait=true requests hold a handler thread each: more than httplib's default pool.
  http_->new_task_queue = [] { return new httplib::ThreadPool(kHandlerThreads); };
  // httplib writes the headers and the body of a reply in separate send()s; without
  // TCP_NODELAY, Nagle holds the body until the client's delayed ACK (~40 ms a request).
  http_->set_tcp_nodelay(true);
  http_->set_keep_alive_max_count(kKeepAliveMaxRequests);
  // Errors httplib produces itself (413, unrouted 404): give them a JSON reason too.
  http_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) Error(res, res.status, DefaultReason(res.status));
  });
  http_->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try { std::rethrow_exception(ep); } catch (const std::exception& e) { what += std::string(": ") + e.what(); } catch (...) {}
    util::LogWarn("serve: " + what);
    Error(res, 500, what);
  });
  Routes();
}

ApiServer::~ApiServer() = default;

void ApiServer::Routes() {
  http_->Post("/v1/verify", [this](const httplib::Request& req, httplib::Response& res) { PostVerify(req, res); });
  http_->Post("/v1/batch", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.body.size() > limits_.max_batch_bytes) return Error(res, 413, "request body too large (--max-batch-bytes)");
    PostBatch(req, res);
  });
  http_->Post("/v1/rewards", [this](const httplib::Request& req, httplib::Response& res) { PostRewards(req, res); });
  http_->Get(R"(/v1/jobs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) { GetJob(req, res); });
  http_->Delete(R"(/v1/jobs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) { DeleteJob(req, res); });
  http_->Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, {{"ok", true}, {"queue_depth", scheduler_->QueueDepth()}, {"running", scheduler_->Running()}, {"slots", scheduler_->Slots()},
                     {"device", scheduler_->on_gpu() ? "gpu" : "cpu"}});
  });
  http_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(scheduler_->RenderMetrics(), "text/plain; version=0.0.4");
  });
}

void ApiServer::PostVerify(const httplib::Request& req, httplib::Response& res) {
  if (req.body.size() > limits_.max_body_bytes) return Error(res, 413, "request body too large (--max-body-bytes)");
  VerifyRequest r;
  std::optional<std::string> header_client;
  std::string err;
  if (!ParseVerifyRequest(req.body, &r, &err) || !api::HeaderClient(req, &header_client, &err)) {
    scheduler_->metrics().Count(Counter::kBadRequest);
    return Error(res, 400, err);
  }
  auto sub = scheduler_->Submit(api::Resolve(std::move(r), std::nullopt, header_client));
  if (sub.kind == Scheduler::SubmitKind::kFull) {
    res.set_header("Retry-After", "5");
    return Error(res, 429, sub.error);
  }
  if (sub.kind == Scheduler::SubmitKind::kClosed) return Error(res, 503, sub.error);
  if (sub.kind == Scheduler::SubmitKind::kError) return Error(res, 500, sub.error);
  bool dedup = sub.kind == Scheduler::SubmitKind::kExisting;
  if (req.get_param_value("wait") == "true") {
    auto job = scheduler_->Wait(sub.id, limits_.wait_timeout, &err);
    if (!job) return Error(res, 500, err.empty() ? "job vanished" : err);
    if (job->state == store::JobState::kDone && job->verdict_json) {
      res.set_header("X-KZ-Job-Id", job->id);
      res.set_header("X-KZ-Deduplicated", dedup ? "true" : "false");
      return res.set_content(*job->verdict_json + "\n", "application/json");
    }
    if (job->state == store::JobState::kFailed) return Reply(res, 500, api::JobJson(*job));
    sub.state = store::ToString(job->state);
  }
  Reply(res, 202, {{"id", sub.id}, {"status", sub.state}, {"deduplicated", dedup}});
}

bool ApiServer::Bind(const std::string& host, int port, std::string* err) {
  // httplib's backlog of 5 drops connections of bursts of clients (SYN retried after 1 s):
  // remember the listening socket, and listen() again with a deep backlog after the bind.
  int listen_fd = -1;
  http_->set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    int one = 1;  // accepted sockets inherit TCP_NODELAY from the listener (Linux)
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (listen_fd < 0) listen_fd = sock;
  });
  if (!http_->bind_to_port(host, port)) {
    *err = "cannot listen on " + host + ":" + std::to_string(port);
    return false;
  }
  if (listen_fd >= 0 && ::listen(listen_fd, kListenBacklog) != 0)
    util::LogWarn("serve: could not deepen the listen backlog");
  http_->set_socket_options(httplib::default_socket_options);
  return true;
}

void ApiServer::Serve() { http_->listen_after_bind(); }

void ApiServer::Stop() { http_->stop(); }

}  // namespace kz::service
