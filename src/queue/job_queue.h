// The Redis Streams job queue between one front (`kz serve --queue`) and many workers
// (`kz worker`), docs/queue.md. Keys, for prefix P (default "kz"):
//   P:jobs      stream of jobs (fields id, task, candidate, backend, options, enqueued_ms);
//               consumer group `worker_group`, one consumer per worker
//   P:verdicts  stream of verdicts (fields id, state, verdict, worker, entry, finished_ms);
//               consumer group `front_group`
//   P:job:ID    hash per job id: entry, state (queued|done|failed), enqueued_ms, worker,
//               verdict_entry, finished_ms, delivered; expires `record_ttl` after its verdict
//
// Guarantees (with Redis run with appendonly yes + appendfsync always):
// - Enqueue is idempotent per job id: while P:job:ID exists, a second Enqueue adds nothing.
// - Execution is at least once: a claimed job that is not completed (worker killed or shut
//   down, heartbeats cut off) is taken over by Reclaim once idle for `reclaim_after`.
// - Verdicts are published once per job id: Complete publishes the verdict and then acks
//   the job in one Lua script, and only if the job has no verdict yet (first wins; a later
//   one is logged and dropped). The reader also drops a verdict whose job is marked
//   delivered, so the callback sees each job id once — except when the front dies between
//   the callback returning true and the ack, where it sees it again after the restart
//   (the callback must treat a job it already finished as success).
//
// Thread safety: one RedisJobQueue holds one connection; its methods may be called from
// any thread and are serialised by a mutex, so a blocking call (Claim, ReadVerdicts)
// delays the others on the same object: give each blocking thread its own RedisJobQueue.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "queue/redis_client.h"
#include "queue/stream_entry.h"
#include "util/thread_annotations.h"

namespace kz::queue {

struct QueueConfig {
  std::string url;                            // redis://HOST:PORT[/DB]
  std::string prefix = "kz";                  // key prefix (a {hash tag} for Redis Cluster)
  std::string worker_group = "workers";       // consumer group of P:jobs
  std::string front_group = "front";          // consumer group of P:verdicts
  std::chrono::milliseconds reclaim_after{60000};  // idle pending entries are taken over after this
  std::chrono::seconds record_ttl{7 * 24 * 3600};  // P:job:ID lifetime after its verdict
};

struct Job {
  std::string id;          // the front's job id (1..200 bytes)
  std::string task;        // Python source of the reference task
  std::string candidate;   // Python source of the candidate
  std::string backend;     // "cuda", "triton" or "" (detected)
  std::string options_json = "{}";  // the request's options object (verify::ApplyJobOptions)
};

struct ClaimedJob {
  std::string entry;       // P:jobs entry id: the handle for Touch and Complete
  Job job;
  int64_t enqueued_ms = 0;
  bool reclaimed = false;  // taken over from another (dead or slow) consumer
  int64_t deliveries = 1;  // times the entry was handed to a consumer (XPENDING's count)
  std::string malformed;   // non-empty: the entry lacks fields; Complete it as failed
};

// A verdict's outcome: kDone, verdict_json is a verdict; kFailed, it is kz's {"error"}.
// Spelled "done" / "failed" in the `state` fields of P:verdicts and P:job:ID (a wire format).
enum class VerdictState { kDone, kFailed };
std::string ToString(VerdictState state);
// nullopt for any other spelling (a verdict entry not written by this protocol).
std::optional<VerdictState> ParseVerdictState(std::string_view text);
// nlohmann::json's hook (argument-dependent lookup): in JSON a VerdictState is its spelling.
template <class Json>
void to_json(Json& j, VerdictState state) {
  j = ToString(state);
}

struct Verdict {
  std::string job_id;
  VerdictState state = VerdictState::kDone;
  std::string verdict_json;
  std::string worker;        // the consumer that produced it
};

// The front's verdict handler: true when the verdict is stored (it is then acked), false
// to keep it pending (it is offered again on a later ReadVerdicts). Called on the thread
// that runs ReadVerdicts.
using VerdictCallback = std::function<bool(const Verdict&)>;

enum class EnqueueResult { kEnqueued, kDuplicate, kError };
enum class CompleteResult { kPublished, kDuplicate, kError };

class RedisJobQueue {
 public:
  // Parses the URL (false/`*err` from Open on a bad one); connects lazily.
  static std::unique_ptr<RedisJobQueue> Open(QueueConfig config, std::string* err);

  // Creates both streams and groups if missing (idempotent; done again on NOGROUP).
  bool Setup(std::string* err);

  // ---- front side ----
  // Adds the job unless P:job:<id> exists (then kDuplicate, nothing added). *entry gets the
  // job's stream entry id (the existing one for a duplicate).
  EnqueueResult Enqueue(const Job& job, std::string* entry, std::string* err);
  // One round of the verdict reader as `consumer` of the front group: first this
  // consumer's pending verdicts (left by a callback that returned false or a crash), then
  // the front group's idle pending ones of other consumers (a dead front of another name),
  // else new ones, blocking up to `block`. Calls `cb` for each, in stream order, and acks
  // the ones it accepted. Returns the number accepted, or -1 with *err.
  int ReadVerdicts(const std::string& consumer, const VerdictCallback& cb, std::chrono::milliseconds block,
                   std::string* err, size_t max_count = 64);

  // ---- worker side ----
  // The next job for `consumer`: its own pending entries first (a restart under the same
  // name), then a new entry, waiting up to `block`. nullopt with *err empty: none came.
  std::optional<ClaimedJob> Claim(const std::string& consumer, std::chrono::milliseconds block, std::string* err);
  // Takes over one entry pending for longer than reclaim_after (a dead consumer's).
  std::optional<ClaimedJob> Reclaim(const std::string& consumer, std::string* err);
  // Heartbeat while running `entry`: resets its idle time if `consumer` still owns it.
  // *owned false: another consumer took it over, or it is complete (stop running it).
  bool Touch(const std::string& consumer, const std::string& entry, bool* owned, std::string* err);
  // Publishes the verdict unless the job already has one (kDuplicate: dropped), then acks
  // and deletes the job entry — one atomic script. Retry on kError: it is idempotent.
  CompleteResult Complete(const ClaimedJob& claimed, const Verdict& verdict, std::string* err);

  const QueueConfig& config() const { return config_; }
  std::string JobsKey() const { return config_.prefix + ":jobs"; }
  std::string VerdictsKey() const { return config_.prefix + ":verdicts"; }
  std::string JobKey(const std::string& id) const { return config_.prefix + ":job:" + id; }
  std::chrono::milliseconds RetryDelay() const;  // of the connection (RedisClient::RetryDelay)

 private:
  RedisJobQueue(QueueConfig config, RedisUrl url);
  // Call with one Setup-and-retry on a NOGROUP error (a Redis that lost its data).
  bool CallGroup(const std::vector<std::string>& args, RedisReply* out, std::string* err,
                 std::chrono::milliseconds extra_timeout = std::chrono::milliseconds{0}) REQUIRES(mu_);
  bool SetupLocked(std::string* err) REQUIRES(mu_);
  // This consumer's first live pending entry ("0") or a new one (">").
  std::optional<ClaimedJob> ReadJob(const std::string& consumer, const std::string& from,
                                    std::chrono::milliseconds block, std::string* err) REQUIRES(mu_);
  ClaimedJob ToClaimed(const StreamEntry& e, bool reclaimed) const;
  // A reclaimed entry with its delivery count filled in.
  std::optional<ClaimedJob> Reclaimed(const StreamEntry& e, std::string* err) REQUIRES(mu_);
  int Deliver(const std::vector<StreamEntry>& entries, const VerdictCallback& cb, std::string* err) REQUIRES(mu_);
  static bool Offer(const StreamEntry& e, const VerdictCallback& cb);
  // The entry's verdict; one whose state is not "done" or "failed" becomes a failed one
  // that says so (the job then ends with that error instead of staying open forever).
  static Verdict VerdictOf(const StreamEntry& e);
  bool AckVerdict(const std::string& entry, const std::string& job_id, std::string* err) REQUIRES(mu_);

  const QueueConfig config_;
  mutable util::Mutex mu_;
  RedisClient client_ GUARDED_BY(mu_);
  std::string jobs_cursor_ GUARDED_BY(mu_) = "0-0";  // XAUTOCLAIM scans
  std::string verdicts_cursor_ GUARDED_BY(mu_) = "0-0";
  std::unordered_set<std::string> accepted_ GUARDED_BY(mu_);         // callback said true, ack pending
  std::unordered_set<std::string> pending_checked_ GUARDED_BY(mu_);  // consumers whose own PEL was read
  std::chrono::steady_clock::time_point verdicts_pending_due_ GUARDED_BY(mu_){};  // re-read our PEL then
};

}  // namespace kz::queue
