// OpenAiEndpoint: an OpenAI-compatible HTTP client on libcurl (HTTPS for hosted
// providers, plain HTTP for local vLLM / SGLang / llama.cpp servers).
//
// Concurrency: Complete() is blocking and thread-safe; the caller bounds the requests in
// flight by the number of threads it calls from (the generator runs --concurrency
// threads). Each call borrows a curl easy handle from a pool (one handle per thread in
// flight, kept for reuse so connections stay alive) — chosen over curl multi because a
// request takes seconds of model time and the pool is small (at most a few hundred), so
// one blocked thread per request costs nothing measurable and keeps the retry logic
// straight-line code.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "generate/endpoint.h"
#include "generate/retry.h"
#include "util/thread_annotations.h"

namespace kz::generate {

struct OpenAiOptions {
  std::string base_url;                      // "http://127.0.0.1:8080/v1", "https://api.openai.com/v1"
  std::string model;
  std::string api_key_env = "OPENAI_API_KEY";  // the variable the key is read from (may be unset)
  size_t max_response_bytes = 8u << 20;      // bodies past this are kTooLarge (8 MiB)
  double connect_timeout_s = 10;
  RetryPolicy retry;
};

class OpenAiEndpoint : public Endpoint {
 public:
  // Reads the key from the environment now ("" when the variable is unset or empty: no
  // Authorization header, as local servers expect).
  explicit OpenAiEndpoint(OpenAiOptions options);
  ~OpenAiEndpoint() override;
  OpenAiEndpoint(const OpenAiEndpoint&) = delete;
  OpenAiEndpoint& operator=(const OpenAiEndpoint&) = delete;

  Result Complete(const Request& request, const std::atomic<bool>& cancel) override;
  std::string Describe() const override;

 private:
  struct Attempt;
  void* TakeHandle();
  void GiveHandle(void* handle);
  // One HTTP exchange within `timeout_s`: the status, body and Retry-After, or a
  // transport error, in *out.
  void Send(void* handle, const std::string& url, const std::string& body, double timeout_s,
            const std::atomic<bool>& cancel, Attempt* out) const;
  // The classified error of a finished exchange that did not give a reply.
  Error StatusError(const Attempt& a) const;

  OpenAiOptions options_;
  std::string api_key_;
  util::Mutex mu_;
  std::vector<void*> idle_ GUARDED_BY(mu_);  // CURL* handles not in use
};

}  // namespace kz::generate
