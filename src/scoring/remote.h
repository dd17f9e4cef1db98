// `kz bench --server URL`: verification through a running `kz serve` (docs/api.md)
// instead of the in-process verifier. Samples go out as POST /v1/batch requests (at most
// `batch` per request, at most `window` unfinished on the server at once) and each job is
// polled with GET /v1/jobs/{id} until it ends. A 429 is retried after its Retry-After with
// the batch halved for the rest of the run (a batch larger than the free queue never
// fits); a 413 halves it too. A sample the server refuses, or a job that ends failed or cancelled, is a per-sample
// server error. Transport failures are retried with backoff until `outage_s` has passed
// without one success; then the run stops (what is done stays done).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/http.h"

namespace kz::scoring {

struct RemoteSample {
  const std::string* task_source = nullptr;  // shared between the samples of a task
  std::string candidate;
  std::string backend;  // "" = the server detects it
};

struct RemoteOptions {
  std::string url;
  std::string client = "kz-bench";  // X-KZ-Client: the server's fairness key
  nlohmann::json job_options = nlohmann::json::object();  // each sample's "options"
  int batch = 32;
  int window = 128;
  double poll_s = 0.5;
  double outage_s = 120;
  double request_timeout_s = 120;
  std::function<void(const std::string&)> note;  // retries and outages, for the progress output
};

// One finished sample. `verdict` is the server's verdict (docs/verdict.md), or for a server
// error {"status": "server_error", "reason": ..., "error": {"kind": "server", "message"}}.
struct RemoteOutcome {
  nlohmann::json verdict;
  std::string job_id;  // "" when the server refused the sample
  bool deduplicated = false;
  bool server_error = false;
};

// A verdict object for a per-sample server error.
nlohmann::json ServerErrorVerdict(const std::string& message);

class RemoteVerifier {
 public:
  explicit RemoteVerifier(RemoteOptions options);

  // GET /healthz; false with *err when the server cannot be reached or is not kz serve.
  bool Check(nlohmann::json* health, std::string* err);

  // Verifies every sample; on_done(index, outcome) is called exactly once per sample that
  // finishes, as it does. False (with *err) when the server stayed unreachable for outage_s:
  // the samples not reported were not verified (a later run resubmits them; the server
  // deduplicates by content).
  bool VerifyAll(const std::vector<RemoteSample>& samples,
                 const std::function<void(size_t, const RemoteOutcome&)>& on_done, std::string* err);

 private:
  RemoteOptions o_;
  HttpClient http_;
};

}  // namespace kz::scoring
