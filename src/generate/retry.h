// Retry rules of the OpenAI client, as pure functions: which failures are retried, the
// backoff schedule (exponential, capped, with jitter) and the Retry-After header.
#pragma once
#include <ctime>
#include <optional>
#include <string>

#include "generate/endpoint.h"

namespace kz::generate {

struct RetryPolicy {
  int max_attempts = 6;     // HTTP requests per Request at most, the first included
  double base_s = 0.5;      // the first retry waits about this long
  double max_delay_s = 30;  // no single wait longer (Retry-After aside, capped by the deadline)
};

// Retried: 429, 5xx (500-599), connection errors (kConnect) and a TLS or transport hiccup
// (kOther). Not retried: other statuses (401, 400, ...), DNS, bad or choiceless JSON (the
// server answered), too_large, timeout, cancelled.
bool IsRetryable(const Error& e);

// The wait before retry `retry` (1 = the first retry): d = min(max_delay, base * 2^(retry-1)),
// then "equal jitter": d/2 + u * d/2 with u in [0, 1) supplied by the caller (a random
// draw in the client, fixed in tests). Never negative.
double BackoffDelay(int retry, const RetryPolicy& policy, double u);

// Retry-After (RFC 9110): delta-seconds ("30", also "1.5"), or an HTTP-date
// ("Wed, 21 Oct 2015 07:28:00 GMT") taken relative to `now`. Seconds to wait (0 for a
// date in the past), or nullopt when the value is neither.
std::optional<double> ParseRetryAfter(const std::string& value, std::time_t now);

// The wait before the next attempt: max(backoff, Retry-After) when the server sent one.
double NextDelay(int retry, const RetryPolicy& policy, double u, std::optional<double> retry_after);

}  // namespace kz::generate
