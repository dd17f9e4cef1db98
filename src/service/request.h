// Parsing and validating `POST /v1/verify` and `POST /v1/batch` bodies, and the job's
// deduplication key.
// Pure functions: callable from any thread.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/sample.h"

namespace kz::service {

struct VerifyRequest {
  std::string task;       // Python source of the reference task
  std::string candidate;  // Python source of the candidate
  std::string backend;    // "cuda", "triton" or "" (detected from the candidate)
  nlohmann::json options = nlohmann::json::object();  // validated by verify::ApplyJobOptions
  // Scheduling (not part of the deduplication key): unset fields take the batch's, then
  // the X-KZ-Client header's, then the defaults (0, "anonymous").
  std::optional<int64_t> priority;
  std::optional<std::string> client;
};

inline constexpr int64_t kMaxPriority = 1000;      // priorities are in -kMaxPriority..kMaxPriority
inline constexpr size_t kMaxClientLength = 128;

struct BatchRequest {
  std::vector<nlohmann::json> samples;  // each still to be validated with ParseVerifyJson
  std::optional<int64_t> priority;
  std::optional<std::string> client;
};

// Parses `body`; false with a reason for the client in *err (malformed JSON, a missing or
// non-string task/candidate, an unknown backend, unknown or mistyped options).
bool ParseVerifyRequest(const std::string& body, VerifyRequest* out, std::string* err);
// The same for one already parsed object (a batch's sample).
bool ParseVerifyJson(const nlohmann::json& j, VerifyRequest* out, std::string* err);

// Parses a batch body's envelope: {"samples": [...], "priority"?, "client"?}. `samples`
// must be a non-empty array; its elements are not validated here.
bool ParseBatchRequest(const std::string& body, BatchRequest* out, std::string* err);

// Validates the optional "priority" (integer in -1000..1000) and "client" (non-empty string
// of at most 128 characters) fields of `j`.
bool ParseScheduling(const nlohmann::json& j, std::optional<int64_t>* priority,
                     std::optional<std::string>* client, std::string* err);

// The deduplication key: a labelled XXH3-128 over the sources, the resolved backend, the
// options and `server_fingerprint` (what of the server's own settings changes a verdict).
std::string JobKey(const VerifyRequest& r, const std::string& server_fingerprint);

}  // namespace kz::service
