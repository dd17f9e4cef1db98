// Helpers shared by the handlers of api_server.cc and api_jobs.cc (internal to service).
#pragma once
#include <httplib.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "service/scheduler.h"
#include "store/job_store.h"

namespace kz::service::api {

inline void Reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

inline void Error(httplib::Response& res, int status, const std::string& reason) {
  Reply(res, status, {{"error", reason}});
}

// The GET /v1/jobs/{id} object of a stored job (docs/api.md).
nlohmann::json JobJson(const store::Job& j);

// The X-KZ-Client header, validated as the body's "client" field is; false with *err
// when present and invalid.
bool HeaderClient(const httplib::Request& req, std::optional<std::string>* client, std::string* err);

// Resolves a request's scheduling fields: its own, else `priority` / `client` (the
// batch's, else the header's), else the defaults (0, "anonymous").
Scheduler::Submission Resolve(VerifyRequest r, std::optional<int64_t> priority,
                              const std::optional<std::string>& client);

}  // namespace kz::service::api
