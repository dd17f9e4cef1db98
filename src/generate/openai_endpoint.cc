#include "generate/openai_endpoint.h"

#include <curl/curl.h>

#include <strings.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "generate/openai_wire.h"

namespace kz::generate {
namespace {
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Sink {
  std::string* body;
  size_t cap;
  bool over = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t n = size * count;
  if (sink->body->size() + n > sink->cap) return sink->over = true, 0;  // aborts: CURLE_WRITE_ERROR
  sink->body->append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  std::string line(data, size * count);
  const std::string name = "retry-after:";
  if (line.size() > name.size() && strncasecmp(line.c_str(), name.c_str(), name.size()) == 0)
    *static_cast<std::string*>(user) = line.substr(name.size());
  return size * count;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(user)->load() ? 1 : 0;  // 1: CURLE_ABORTED_BY_CALLBACK
}

Error TransportError(CURLcode code, bool over_cap, const char* detail) {
  std::string what = std::string(curl_easy_strerror(code)) + (*detail ? std::string(": ") + detail : "");
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return {ErrorKind::kDns, 0, what};
    case CURLE_COULDNT_CONNECT:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return {ErrorKind::kConnect, 0, what};
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
      return {ErrorKind::kTls, 0, what};
    case CURLE_OPERATION_TIMEDOUT:
      return {ErrorKind::kTimeout, 0, what};
    case CURLE_ABORTED_BY_CALLBACK:
      return {ErrorKind::kCancelled, 0, "cancelled"};
    case CURLE_FILESIZE_EXCEEDED:
      return {ErrorKind::kTooLarge, 0, what};
    case CURLE_WRITE_ERROR:
      if (over_cap) return {ErrorKind::kTooLarge, 0, "the reply passed the response-size cap"};
      return {ErrorKind::kOther, 0, what};
    default:
      return {ErrorKind::kOther, 0, what};
  }
}

std::once_flag g_curl_init;
}  // namespace

struct OpenAiEndpoint::Attempt {
  long status = 0;
  std::string body, retry_after;
  std::optional<Error> transport;
};

OpenAiEndpoint::OpenAiEndpoint(OpenAiOptions options) : options_(std::move(options)) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  while (!options_.base_url.empty() && options_.base_url.back() == '/') options_.base_url.pop_back();
  if (const char* k = std::getenv(options_.api_key_env.c_str()); k) api_key_ = k;
}

OpenAiEndpoint::~OpenAiEndpoint() {
  for (void* h : idle_) curl_easy_cleanup(static_cast<CURL*>(h));
}

std::string OpenAiEndpoint::Describe() const { return options_.base_url + " (model " + options_.model + ")"; }

void* OpenAiEndpoint::TakeHandle() {
  {
    util::MutexLock lock(mu_);
    if (!idle_.empty()) {
      void* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  return curl_easy_init();
}

void OpenAiEndpoint::GiveHandle(void* handle) {
  util::MutexLock lock(mu_);
  idle_.push_back(handle);
}

void OpenAiEndpoint::Send(void* handle, const std::string& url, const std::string& body, double timeout_s,
                          const std::atomic<bool>& cancel, Attempt* out) const {
  CURL* h = static_cast<CURL*>(handle);
  curl_easy_reset(h);
  char detail[CURL_ERROR_SIZE] = "";
  Sink sink{&out->body, options_.max_response_bytes};
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  std::string auth = "Authorization: Bearer " + api_key_;
  if (!api_key_.empty()) headers = curl_slist_append(headers, auth.c_str());
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &out->retry_after);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &cancel);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_response_bytes));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max(1L, static_cast<long>(timeout_s * 1000)));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   std::max(1L, static_cast<long>(std::min(timeout_s, options_.connect_timeout_s) * 1000)));
  CURLcode code = curl_easy_perform(h);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    out->transport = TransportError(code, sink.over, detail);
    return;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
}

Error OpenAiEndpoint::StatusError(const Attempt& a) const {
  int status = static_cast<int>(a.status);
  std::string msg = "HTTP " + std::to_string(status) + ": " + ErrorExcerpt(a.body);
  if (status == 401 || status == 403)
    msg += api_key_.empty() ? " (no API key: $" + options_.api_key_env + " is not set)"
                            : " (check the API key in $" + options_.api_key_env + ")";
  return {ErrorKind::kHttpStatus, status, msg};
}

Result OpenAiEndpoint::Complete(const Request& request, const std::atomic<bool>& cancel) {
  const auto start = Clock::now();
  const std::string url = options_.base_url + ApiPath(request.api);
  const std::string body = RequestBody(request, options_.model).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Result r;
  void* handle = TakeHandle();
  for (int attempt = 1;; ++attempt) {
    double left = request.deadline_s - Since(start);
    if (cancel) { r.outcome = Error{ErrorKind::kCancelled, 0, "cancelled"}; break; }
    if (left <= 0) { r.outcome = Error{ErrorKind::kTimeout, 0, "the request's deadline passed"}; break; }
    Attempt a;
    r.attempts = attempt;
    Send(handle, url, body, left, cancel, &a);
    if (a.transport && a.transport->kind == ErrorKind::kTimeout) a.transport->message = "the request's deadline passed";
    if (!a.transport && a.status == 200) { auto p = ParseReply(a.body, request.sampling); r.outcome = std::move(p.outcome); break; }
    Error e = a.transport ? *a.transport : StatusError(a);
    auto after = a.transport ? std::nullopt : ParseRetryAfter(a.retry_after, std::time(nullptr));
    double wait = NextDelay(attempt, options_.retry, unit(rng), after);
    if (!IsRetryable(e) || attempt >= options_.retry.max_attempts || wait >= request.deadline_s - Since(start)) {
      if (IsRetryable(e)) e.message += " (gave up after " + std::to_string(attempt) + " attempts)";
      r.outcome = std::move(e);
      break;
    }
    for (auto until = Clock::now() + std::chrono::duration<double>(wait); Clock::now() < until && !cancel;)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  GiveHandle(handle);
  r.latency_s = Since(start);
  return r;
}

}  // namespace kz::generate
