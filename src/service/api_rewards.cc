// ApiServer handler for POST /v1/rewards (docs/api.md, "Rewards"): one group of samples of
// one task in; their verdicts, CA-GRPO rewards and advantages, and the gate out.
#include <algorithm>
#include <chrono>

#include "service/api_json.h"
#include "service/api_server.h"
#include "service/rewards_request.h"

namespace kz::service {
using nlohmann::json;
using api::Error;
using api::Reply;

namespace {
bool Pending(const store::Job& j) { return j.state == store::JobState::kQueued || j.state == store::JobState::kRunning; }
}  // namespace

void ApiServer::PostRewards(const httplib::Request& req, httplib::Response& res) {
  if (req.body.size() > limits_.max_batch_bytes) return Error(res, 413, "request body too large (--max-batch-bytes)");
  RewardsRequest r;
  std::optional<std::string> header_client;
  std::string err;
  if (!ParseRewardsRequest(req.body, limits_.max_batch_samples, &r, &err) || !api::HeaderClient(req, &header_client, &err)) {
    scheduler_->metrics().Count(Counter::kBadRequest);
    return Error(res, 400, err);
  }
  std::vector<Scheduler::Submission> subs;
  for (auto& s : r.samples) subs.push_back(api::Resolve(std::move(s), r.priority, r.client ? r.client : header_client));
  auto sub = scheduler_->SubmitBatch(subs);
  if (sub.kind == Scheduler::SubmitKind::kFull) {
    res.set_header("Retry-After", "5");
    return Error(res, 429, sub.error + "; nothing of the group was queued");
  }
  if (sub.kind == Scheduler::SubmitKind::kClosed) return Error(res, 503, sub.error);
  if (sub.kind == Scheduler::SubmitKind::kError) return Error(res, 500, sub.error);
  const auto deadline = std::chrono::steady_clock::now() + limits_.wait_timeout;
  std::vector<std::string> ids;
  std::vector<json> verdicts;
  json pending = json::array();
  for (const auto& item : sub.items) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto job = scheduler_->Wait(item.id, std::max(left, std::chrono::milliseconds(0)), &err);
    if (!job) return Error(res, 500, err.empty() ? "job vanished" : err);
    ids.push_back(job->id);
    if (Pending(*job)) pending.push_back({{"id", job->id}, {"status", job->state}});
    json v = job->state == store::JobState::kDone && job->verdict_json ? json::parse(*job->verdict_json, nullptr, false) : json();
    verdicts.push_back(v.is_discarded() ? json() : v);
  }
  if (!pending.empty())  // the same body again later finds the stored verdicts (deduplicated)
    return Reply(res, 202, {{"complete", false}, {"pending", pending},
                            {"note", "not every verdict was ready within --wait-timeout; POST the same body again"}});
  Reply(res, 200, RewardsReply(ids, verdicts, r.reward));
}

}  // namespace kz::service
