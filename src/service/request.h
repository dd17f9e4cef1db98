// Parsing and validating a `POST /v1/verify` body, and the job's deduplication key.
// Pure functions: callable from any thread.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "verify/sample.h"

namespace kz::service {

struct VerifyRequest {
  std::string task;       // Python source of the reference task
  std::string candidate;  // Python source of the candidate
  std::string backend;    // "cuda", "triton" or "" (detected from the candidate)
  nlohmann::json options = nlohmann::json::object();  // validated by ApplyOptions
};

// Parses `body`; false with a reason for the client in *err (malformed JSON, a missing or
// non-string task/candidate, an unknown backend, unknown or mistyped options).
bool ParseVerifyRequest(const std::string& body, VerifyRequest* out, std::string* err);

// Applies a request's options to the server's base options. Known keys: trials (1..1000),
// seed, timing (bool), atol, rtol, rel_l2 (numbers >= 0), policy ("strict"|"kernelbench").
bool ApplyOptions(const nlohmann::json& options, verify::VerifyOptions* o, std::string* err);

// The deduplication key: a labelled XXH3-128 over the sources, the resolved backend, the
// options and `server_fingerprint` (what of the server's own settings changes a verdict).
std::string JobKey(const VerifyRequest& r, const std::string& server_fingerprint);

}  // namespace kz::service
