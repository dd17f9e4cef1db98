// RedisJobQueue: setup, the front side (Enqueue, ReadVerdicts). The worker side is in
// job_queue_worker.cc.
#include "queue/job_queue.h"

#include <nlohmann/json.hpp>

#include "queue/stream_entry.h"
#include "util/clock.h"
#include "util/log.h"

namespace kz::queue {
namespace {

// KEYS: job hash, jobs stream. ARGV: id, task, candidate, backend, options, now_ms.
// Returns {1, entry} when added, {0, existing entry} when the job id is known.
constexpr const char* kEnqueueScript = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('HGET', KEYS[1], 'entry') or ''}
end
local e = redis.call('XADD', KEYS[2], '*', 'id', ARGV[1], 'task', ARGV[2], 'candidate', ARGV[3],
                      'backend', ARGV[4], 'options', ARGV[5], 'enqueued_ms', ARGV[6])
redis.call('HSET', KEYS[1], 'entry', e, 'state', 'queued', 'enqueued_ms', ARGV[6])
return {1, e}
)lua";

// KEYS: job hash, verdicts stream. ARGV: group, entry. Marks the job's verdict delivered
// (a later verdict for it is dropped by the reader), acks and deletes the entry.
constexpr const char* kAckVerdictScript = R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'delivered', '1') end
redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[2], ARGV[2])
return 1
)lua";

constexpr size_t kMaxJobIdBytes = 200;
constexpr std::chrono::milliseconds kCallbackRetry{1000};  // a refused verdict is offered again after this

}  // namespace

std::unique_ptr<RedisJobQueue> RedisJobQueue::Open(QueueConfig config, std::string* err) {
  RedisUrl url;
  if (!ParseRedisUrl(config.url, &url, err)) return nullptr;
  if (config.prefix.empty()) return *err = "the queue's key prefix must not be empty", nullptr;
  if (config.reclaim_after.count() <= 0) return *err = "reclaim_after must be positive", nullptr;
  return std::unique_ptr<RedisJobQueue>(new RedisJobQueue(std::move(config), url));
}

RedisJobQueue::RedisJobQueue(QueueConfig config, RedisUrl url)
    : config_(std::move(config)), client_(RedisClient::Options{std::move(url)}) {}

std::chrono::milliseconds RedisJobQueue::RetryDelay() const {
  util::MutexLock lock(mu_);
  return client_.RetryDelay();
}

bool RedisJobQueue::Setup(std::string* err) {
  util::MutexLock lock(mu_);
  return SetupLocked(err);
}

bool RedisJobQueue::SetupLocked(std::string* err) {
  for (const auto& [key, group] : {std::pair{JobsKey(), config_.worker_group}, {VerdictsKey(), config_.front_group}}) {
    RedisReply r;
    if (!client_.Command({"XGROUP", "CREATE", key, group, "0", "MKSTREAM"}, &r, err)) return false;
    if (r.IsError() && r.str.rfind("BUSYGROUP", 0) != 0) return *err = "XGROUP CREATE " + key + ": " + r.str, false;
  }
  return true;
}

bool RedisJobQueue::CallGroup(const std::vector<std::string>& args, RedisReply* out, std::string* err,
                              std::chrono::milliseconds extra_timeout) {
  if (!client_.Command(args, out, err, extra_timeout)) return false;
  if (out->IsError() && out->str.rfind("NOGROUP", 0) == 0) {
    util::LogWarn("queue: " + out->str + " (Redis lost its data?): creating the streams and groups again");
    if (!SetupLocked(err) || !client_.Command(args, out, err, extra_timeout)) return false;
  }
  if (out->IsError()) return *err = "redis " + args[0] + ": " + out->str, false;
  return true;
}

EnqueueResult RedisJobQueue::Enqueue(const Job& job, std::string* entry, std::string* err) {
  if (job.id.empty() || job.id.size() > kMaxJobIdBytes) {
    *err = "job id must be 1.." + std::to_string(kMaxJobIdBytes) + " bytes";
    return EnqueueResult::kError;
  }
  util::MutexLock lock(mu_);
  RedisReply r;
  if (!client_.Call({"EVAL", kEnqueueScript, "2", JobKey(job.id), JobsKey(), job.id, job.task, job.candidate,
                     job.backend, job.options_json, std::to_string(util::UnixMs())},
                    &r, err))
    return EnqueueResult::kError;
  if (!r.IsArray() || r.elements.size() != 2) {
    *err = "enqueue: unexpected reply from Redis";
    return EnqueueResult::kError;
  }
  *entry = r.elements[1].AsString();
  return r.elements[0].integer == 1 ? EnqueueResult::kEnqueued : EnqueueResult::kDuplicate;
}

int RedisJobQueue::ReadVerdicts(const std::string& consumer, const VerdictCallback& cb,
                                std::chrono::milliseconds block, std::string* err, size_t max_count) {
  util::MutexLock lock(mu_);
  const std::string& g = config_.front_group;
  const std::string n = std::to_string(std::max<size_t>(1, max_count));
  RedisReply r;
  if (std::chrono::steady_clock::now() >= verdicts_pending_due_) {  // ours, not yet acked
    if (!CallGroup({"XREADGROUP", "GROUP", g, consumer, "COUNT", n, "STREAMS", VerdictsKey(), "0"}, &r, err)) return -1;
    auto mine = ParseReadGroup(r);
    if (!mine.empty()) return Deliver(mine, cb, err);
    verdicts_pending_due_ = std::chrono::steady_clock::time_point::max();
  }
  std::string idle = std::to_string(config_.reclaim_after.count());
  if (!CallGroup({"XAUTOCLAIM", VerdictsKey(), g, consumer, idle, verdicts_cursor_, "COUNT", n}, &r, err)) return -1;
  auto stale = ParseAutoClaim(r, &verdicts_cursor_);
  std::erase_if(stale, [](const StreamEntry& e) { return e.deleted; });
  if (!stale.empty()) return Deliver(stale, cb, err);
  if (!CallGroup({"XREADGROUP", "GROUP", g, consumer, "COUNT", n, "BLOCK", std::to_string(block.count()),
                  "STREAMS", VerdictsKey(), ">"},
                 &r, err, block))
    return -1;
  return Deliver(ParseReadGroup(r), cb, err);
}

// Offers each entry to `cb` once per job id (dropping verdicts of jobs already delivered)
// and acks the accepted ones. An entry whose callback said true but whose ack failed is
// remembered in accepted_ and only acked next time.
int RedisJobQueue::Deliver(const std::vector<StreamEntry>& entries, const VerdictCallback& cb, std::string* err) {
  int accepted = 0;
  for (const auto& e : entries) {
    std::string id = e.Field("id");
    bool ack = e.deleted || id.empty() || accepted_.count(e.id) > 0;
    if (e.deleted || id.empty()) util::LogWarn("queue: verdict entry " + e.id + " is deleted or has no job id: dropped");
    if (!ack) {
      RedisReply r;
      if (!client_.Call({"HGET", JobKey(id), "delivered"}, &r, err)) return -1;
      if ((ack = r.AsString() == "1"))
        util::LogWarn("queue: job " + id + ": duplicate verdict (entry " + e.id + ", worker " + e.Field("worker") +
                      ") dropped: its verdict was delivered already");
    }
    if (!ack && Offer(e, cb)) {
      ack = true;
      accepted_.insert(e.id);
      ++accepted;
    }
    if (!ack) {
      verdicts_pending_due_ = std::min(verdicts_pending_due_, std::chrono::steady_clock::now() + kCallbackRetry);
      continue;
    }
    if (!AckVerdict(e.id, id, err)) {
      verdicts_pending_due_ = std::chrono::steady_clock::now();  // re-read ours after the reconnect
      return -1;
    }
    accepted_.erase(e.id);
  }
  return accepted;
}

std::string ToString(VerdictState state) { return state == VerdictState::kDone ? "done" : "failed"; }

std::optional<VerdictState> ParseVerdictState(std::string_view text) {
  if (text == "done") return VerdictState::kDone;
  if (text == "failed") return VerdictState::kFailed;
  return std::nullopt;
}

Verdict RedisJobQueue::VerdictOf(const StreamEntry& e) {
  Verdict v{e.Field("id"), VerdictState::kFailed, e.Field("verdict"), e.Field("worker")};
  std::string state = e.Field("state");
  if (std::optional<VerdictState> parsed = ParseVerdictState(state)) {
    v.state = *parsed;
    return v;
  }
  std::string why = "verdict entry " + e.id + " from worker '" + v.worker + "' has an unknown state '" + state + "'";
  util::LogWarn("queue: job " + v.job_id + ": " + why + ": the job fails");
  v.verdict_json = nlohmann::json{{"error", why}}.dump();
  return v;
}

bool RedisJobQueue::Offer(const StreamEntry& e, const VerdictCallback& cb) {
  Verdict v = VerdictOf(e);
  try {
    if (cb(v)) return true;
  } catch (const std::exception& ex) {
    util::LogWarn("queue: verdict callback for job " + v.job_id + " threw: " + ex.what());
  }
  return false;
}

bool RedisJobQueue::AckVerdict(const std::string& entry, const std::string& job_id, std::string* err) {
  RedisReply r;
  return client_.Call({"EVAL", kAckVerdictScript, "2", JobKey(job_id), VerdictsKey(), config_.front_group, entry},
                      &r, err);
}

}  // namespace kz::queue
