// RedisJobQueue: the worker side (Claim, Reclaim, Touch, Complete).
#include "queue/job_queue.h"

#include <charconv>

#include "util/clock.h"
#include "util/log.h"

namespace kz::queue {
namespace {

// KEYS: jobs stream. ARGV: group, entry, consumer. Resets the entry's idle time when
// `consumer` still owns it; 0 when another consumer does or it is no longer pending.
constexpr const char* kTouchScript = R"lua(
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #p == 0 or p[1][2] ~= ARGV[3] then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[3], 0, ARGV[2], 'JUSTID')
return 1
)lua";

// KEYS: job hash, jobs stream, verdicts stream. ARGV: group, entry, job id, state,
// verdict, worker, now_ms, ttl_s. The first verdict of a job is published (then the job
// is acked); a later one is dropped. Either way the job entry is acked and deleted.
constexpr const char* kCompleteScript = R"lua(
local st = redis.call('HGET', KEYS[1], 'state')
local first = ARGV[3] ~= '' and st ~= 'done' and st ~= 'failed'
if first then
  local v = redis.call('XADD', KEYS[3], '*', 'id', ARGV[3], 'state', ARGV[4], 'verdict', ARGV[5],
                        'worker', ARGV[6], 'entry', ARGV[2], 'finished_ms', ARGV[7])
  redis.call('HSET', KEYS[1], 'state', ARGV[4], 'worker', ARGV[6], 'verdict_entry', v, 'finished_ms', ARGV[7])
  redis.call('EXPIRE', KEYS[1], ARGV[8])
end
redis.call('XACK', KEYS[2], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[2], ARGV[2])
if first then return 1 end
return 0
)lua";

constexpr int kMaxReclaimScans = 8;  // XAUTOCLAIM rounds per Reclaim call (each scans ~10 PEL entries)

}  // namespace

ClaimedJob RedisJobQueue::ToClaimed(const StreamEntry& e, bool reclaimed) const {
  ClaimedJob c;
  c.entry = e.id;
  c.reclaimed = reclaimed;
  c.job = {e.Field("id"), e.Field("task"), e.Field("candidate"), e.Field("backend"), e.Field("options")};
  if (c.job.options_json.empty()) c.job.options_json = "{}";
  std::string ms = e.Field("enqueued_ms");
  std::from_chars(ms.data(), ms.data() + ms.size(), c.enqueued_ms);
  for (const char* f : {"id", "task", "candidate"})
    if (!e.Has(f)) c.malformed += std::string(c.malformed.empty() ? "job entry lacks field(s): " : ", ") + f;
  return c;
}

std::optional<ClaimedJob> RedisJobQueue::Reclaimed(const StreamEntry& e, std::string* err) {
  ClaimedJob c = ToClaimed(e, true);
  RedisReply r;
  if (!client_.Call({"XPENDING", JobsKey(), config_.worker_group, e.id, e.id, "1"}, &r, err)) return std::nullopt;
  if (r.IsArray() && !r.elements.empty() && r.elements[0].elements.size() >= 4)
    c.deliveries = r.elements[0].elements[3].integer;
  return c;
}

std::optional<ClaimedJob> RedisJobQueue::ReadJob(const std::string& consumer, const std::string& from,
                                                 std::chrono::milliseconds block, std::string* err) {
  std::vector<std::string> args{"XREADGROUP", "GROUP", config_.worker_group, consumer, "COUNT", from == ">" ? "1" : "16"};
  if (from == ">") args.insert(args.end(), {"BLOCK", std::to_string(block.count())});
  args.insert(args.end(), {"STREAMS", JobsKey(), from});
  RedisReply r;
  if (!CallGroup(args, &r, err, from == ">" ? block : std::chrono::milliseconds{0})) return std::nullopt;
  for (const auto& e : ParseReadGroup(r)) {
    if (!e.deleted) return from == ">" ? std::optional(ToClaimed(e, false)) : Reclaimed(e, err);
    // Deleted while pending (completed by another consumer): nothing to run.
    if (!client_.Call({"XACK", JobsKey(), config_.worker_group, e.id}, &r, err)) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ClaimedJob> RedisJobQueue::Claim(const std::string& consumer, std::chrono::milliseconds block,
                                               std::string* err) {
  util::MutexLock lock(mu_);
  err->clear();
  if (!pending_checked_.count(consumer)) {  // entries a previous process of this name left
    auto job = ReadJob(consumer, "0", block, err);
    if (job || !err->empty()) return job;
    pending_checked_.insert(consumer);
  }
  return ReadJob(consumer, ">", block, err);
}

std::optional<ClaimedJob> RedisJobQueue::Reclaim(const std::string& consumer, std::string* err) {
  util::MutexLock lock(mu_);
  err->clear();
  std::string idle = std::to_string(config_.reclaim_after.count());
  for (int i = 0; i < kMaxReclaimScans; ++i) {
    RedisReply r;
    if (!CallGroup({"XAUTOCLAIM", JobsKey(), config_.worker_group, consumer, idle, jobs_cursor_, "COUNT", "1"}, &r, err))
      return std::nullopt;
    for (const auto& e : ParseAutoClaim(r, &jobs_cursor_))
      if (!e.deleted) return Reclaimed(e, err);
    if (jobs_cursor_ == "0-0") break;  // scanned the whole PEL
  }
  return std::nullopt;
}

bool RedisJobQueue::Touch(const std::string& consumer, const std::string& entry, bool* owned, std::string* err) {
  util::MutexLock lock(mu_);
  RedisReply r;
  if (!client_.Call({"EVAL", kTouchScript, "1", JobsKey(), config_.worker_group, entry, consumer}, &r, err)) return false;
  *owned = r.integer == 1;
  return true;
}

CompleteResult RedisJobQueue::Complete(const ClaimedJob& claimed, const Verdict& verdict, std::string* err) {
  util::MutexLock lock(mu_);
  const std::string& id = claimed.job.id;
  RedisReply r;
  if (!client_.Call({"EVAL", kCompleteScript, "3", JobKey(id), JobsKey(), VerdictsKey(), config_.worker_group,
                     claimed.entry, id, ToString(verdict.state), verdict.verdict_json, verdict.worker,
                     std::to_string(util::UnixMs()), std::to_string(config_.record_ttl.count())},
                    &r, err))
    return CompleteResult::kError;
  if (r.integer == 1) return CompleteResult::kPublished;
  util::LogWarn("queue: job " + (id.empty() ? "(no id, entry " + claimed.entry + ")" : id) +
                ": verdict from " + verdict.worker + " dropped: the job has a verdict already");
  return CompleteResult::kDuplicate;
}

}  // namespace kz::queue
