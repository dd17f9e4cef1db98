// ApiServer handlers for jobs: POST /v1/batch, GET and DELETE /v1/jobs/{id}.
#include "service/api_json.h"
#include "service/api_server.h"

namespace kz::service {
using nlohmann::json;

namespace api {

json JobJson(const store::Job& j) {
  auto ms = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  json verdict = nullptr;
  if (j.verdict_json) verdict = json::parse(*j.verdict_json, nullptr, false);
  json out = {{"id", j.id},
              {"state", j.state},
              {"priority", j.priority},
              {"client", j.client},
              {"submitted_at_ms", j.submitted_at_ms},
              {"started_at_ms", ms(j.started_at_ms)},
              {"finished_at_ms", ms(j.finished_at_ms)},
              {"task_xxh128", j.task_hash},
              {"candidate_xxh128", j.candidate_hash}};
  if (j.state == store::JobState::kFailed) {
    out["error"] = verdict.is_object() ? verdict.value("error", "internal error") : "internal error";
    verdict = nullptr;
  } else if (j.state == store::JobState::kCancelled) {
    out["cancelled_while"] = verdict.is_object() ? verdict.value("cancelled_while", "queued") : "queued";
    verdict = nullptr;
  }
  out["verdict"] = verdict;
  return out;
}

bool HeaderClient(const httplib::Request& req, std::optional<std::string>* client, std::string* err) {
  if (!req.has_header("X-KZ-Client")) return true;
  std::optional<int64_t> unused;
  if (!ParseScheduling(json{{"client", req.get_header_value("X-KZ-Client")}}, &unused, client, err))
    return *err = "header X-KZ-Client must be a non-empty string of at most 128 characters", false;
  return true;
}

Scheduler::Submission Resolve(VerifyRequest r, std::optional<int64_t> priority, const std::optional<std::string>& client) {
  Scheduler::Submission s;
  s.priority = r.priority.value_or(priority.value_or(0));
  s.client = r.client.value_or(client.value_or("anonymous"));
  s.request = std::move(r);
  return s;
}

}  // namespace api

using api::Error;
using api::Reply;

void ApiServer::PostBatch(const httplib::Request& req, httplib::Response& res) {
  BatchRequest b;
  std::optional<std::string> header_client;
  std::string err;
  if (!ParseBatchRequest(req.body, &b, &err) || !api::HeaderClient(req, &header_client, &err)) {
    scheduler_->metrics().Count(Counter::kBadRequest);
    return Error(res, 400, err);
  }
  if (b.samples.size() > limits_.max_batch_samples) {
    scheduler_->metrics().Count(Counter::kBatchTooLarge);
    return Error(res, 413, "batch of " + std::to_string(b.samples.size()) + " samples is over the limit of " +
                               std::to_string(limits_.max_batch_samples) + " (--max-batch)");
  }
  std::optional<std::string> client = b.client ? b.client : header_client;
  std::vector<Scheduler::Submission> valid;
  std::vector<size_t> index;  // valid[i] is sample index[i]
  json jobs = json::array();
  for (size_t i = 0; i < b.samples.size(); ++i) {
    VerifyRequest r;
    if (ParseVerifyJson(b.samples[i], &r, &err)) {
      valid.push_back(api::Resolve(std::move(r), b.priority, client));
      index.push_back(i);
      jobs.push_back(nullptr);
    } else {
      scheduler_->metrics().Count(Counter::kBadRequest);
      jobs.push_back({{"index", i}, {"error", err}});
    }
  }
  Scheduler::BatchResult sub;
  if (!valid.empty()) sub = scheduler_->SubmitBatch(valid);
  else sub.kind = Scheduler::SubmitKind::kQueued;
  if (sub.kind == Scheduler::SubmitKind::kFull) {
    res.set_header("Retry-After", "5");
    return Error(res, 429, sub.error + "; nothing of the batch was queued");
  }
  if (sub.kind == Scheduler::SubmitKind::kClosed) return Error(res, 503, sub.error);
  if (sub.kind == Scheduler::SubmitKind::kError) return Error(res, 500, sub.error);
  for (size_t k = 0; k < valid.size(); ++k) {
    const auto& item = sub.items[k];
    jobs[index[k]] = {{"index", index[k]}, {"id", item.id}, {"status", item.state},
                      {"deduplicated", item.kind == Scheduler::SubmitKind::kExisting}};
  }
  Reply(res, 202, {{"jobs", jobs}});
}

void ApiServer::GetJob(const httplib::Request& req, httplib::Response& res) {
  std::string err, id = req.matches[1];
  auto job = scheduler_->Wait(id, std::chrono::milliseconds(0), &err);
  if (!job) return err.empty() ? Error(res, 404, "no job " + id) : Error(res, 500, err);
  Reply(res, 200, api::JobJson(*job));
}

void ApiServer::DeleteJob(const httplib::Request& req, httplib::Response& res) {
  auto c = scheduler_->Cancel(req.matches[1]);
  switch (c.kind) {
    case Scheduler::CancelKind::kCancelled: return Reply(res, 200, api::JobJson(*c.job));
    case Scheduler::CancelKind::kNotFound: return Error(res, 404, c.error);
    case Scheduler::CancelKind::kConflict: {
      json body = {{"error", c.error}};
      if (c.job) body["state"] = c.job->state;
      return Reply(res, 409, body);
    }
    case Scheduler::CancelKind::kError: return Error(res, 500, c.error);
  }
}

}  // namespace kz::service
