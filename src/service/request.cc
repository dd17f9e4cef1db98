#include "service/request.h"

#include "verify/job_input.h"

#include "util/hash.h"

namespace kz::service {
using nlohmann::json;

bool ParseVerifyRequest(const std::string& body, VerifyRequest* out, std::string* err) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return *err = "malformed JSON body", false;
  if (!j.is_object()) return *err = "the body must be a JSON object", false;
  return ParseVerifyJson(j, out, err);
}

bool ParseScheduling(const json& j, std::optional<int64_t>* priority, std::optional<std::string>* client,
                     std::string* err) {
  if (j.contains("priority") && !j["priority"].is_null()) {
    const json& p = j["priority"];
    if (!p.is_number_integer() || p.get<int64_t>() < -kMaxPriority || p.get<int64_t>() > kMaxPriority)
      return *err = "field 'priority' must be an integer in -1000..1000", false;
    *priority = p.get<int64_t>();
  }
  if (j.contains("client") && !j["client"].is_null()) {
    const json& c = j["client"];
    if (!c.is_string() || c.get<std::string>().empty() || c.get<std::string>().size() > kMaxClientLength)
      return *err = "field 'client' must be a non-empty string of at most 128 characters", false;
    *client = c.get<std::string>();
  }
  return true;
}

bool ParseBatchRequest(const std::string& body, BatchRequest* out, std::string* err) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return *err = "malformed JSON body", false;
  if (!j.is_object()) return *err = "the body must be a JSON object", false;
  if (!j.contains("samples")) return *err = "missing field 'samples'", false;
  if (!j["samples"].is_array() || j["samples"].empty())
    return *err = "field 'samples' must be a non-empty array", false;
  if (!ParseScheduling(j, &out->priority, &out->client, err)) return false;
  out->samples = j["samples"].get<std::vector<json>>();
  return true;
}

bool ParseVerifyJson(const json& j, VerifyRequest* out, std::string* err) {
  if (!j.is_object()) return *err = "the sample must be a JSON object", false;
  if (!ParseScheduling(j, &out->priority, &out->client, err)) return false;
  for (const char* field : {"task", "candidate"}) {
    if (!j.contains(field)) return *err = std::string("missing field '") + field + "'", false;
    if (!j[field].is_string()) return *err = std::string("field '") + field + "' must be a string", false;
  }
  out->task = j["task"].get<std::string>();
  out->candidate = j["candidate"].get<std::string>();
  if (j.contains("backend") && !j["backend"].is_null()) {
    const json& b = j["backend"];
    if (!b.is_string() || (b != "cuda" && b != "triton"))
      return *err = "unknown backend " + b.dump() + " (cuda or triton)", false;
    out->backend = b.get<std::string>();
  }
  if (j.contains("options") && !j["options"].is_null()) {
    if (!j["options"].is_object()) return *err = "field 'options' must be an object", false;
    out->options = j["options"];
  }
  verify::VerifyOptions probe;
  if (!verify::ApplyJobOptions(out->options, &probe, err)) return false;
  if (out->options.value("self_check", false) && out->candidate != out->task)
    return *err = "option 'self_check' verifies the task against itself: the candidate must be the task's source", false;
  return true;
}

std::string JobKey(const VerifyRequest& r, const std::string& server_fingerprint) {
  std::string backend = r.backend.empty() ? verify::DetectBackend(r.candidate) : r.backend;
  util::LabelledHasher h;
  h.Add("kz.job", "1")
      .Add("task", r.task)
      .Add("candidate", r.candidate)
      .Add("backend", backend)
      .Add("options", r.options.dump())  // object keys are sorted: canonical
      .Add("server", server_fingerprint);
  return h.HexDigest();
}

}  // namespace kz::service
