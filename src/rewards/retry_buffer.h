// Buffered Dynamic Retry (issue 22, docs/rewards.md "Multi-turn"): a task whose whole group
// failed carries no learning signal; instead of dropping it, it waits in a bounded FIFO buffer
// and comes back in a later step (with more samples or with feedback, the caller's choice), at
// most `max_retries` times. A group that then has a correct sample is "recovered". The buffer
// never grows past `capacity`: an offer to a full buffer is dropped and counted. Persisted as
// JSON (kz.retry_buffer/1) so a resumed run keeps it. Pure bookkeeping.
#pragma once
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::rewards {

struct RetryStats {
  long offered = 0;          // all-fail groups offered
  long enqueued = 0;
  long dropped_full = 0;     // offered to a full buffer
  long exhausted = 0;        // failed again after max_retries: given up
  long retried = 0;          // taken back for a retry
  long recovered = 0;        // a retried group with a correct sample
  double yield() const { return retried ? double(recovered) / double(retried) : 0.0; }
};

class RetryBuffer {
 public:
  RetryBuffer(size_t capacity, int max_retries) : capacity_(capacity), max_retries_(max_retries) {}

  // An all-fail group of `task`: buffered unless its retries are used up or the buffer is full.
  void OfferAllFail(const std::string& task);
  // Up to `n` tasks to retry now, oldest first (removed from the buffer).
  std::vector<std::string> Take(size_t n);
  // The outcome of a retried task's group: recovered (some sample correct) or failed again
  // (re-offered by the caller with OfferAllFail, which counts its retries).
  void RecordRetry(const std::string& task, bool recovered);

  size_t size() const { return queue_.size(); }
  const RetryStats& stats() const { return stats_; }
  int retries(const std::string& task) const;

  nlohmann::json ToJson() const;
  static std::optional<RetryBuffer> FromJson(const nlohmann::json& j, std::string* err);

 private:
  size_t capacity_;
  int max_retries_;
  std::deque<std::string> queue_;
  std::map<std::string, int> retries_;  // retries taken per task
  RetryStats stats_;
};

}  // namespace kz::rewards
