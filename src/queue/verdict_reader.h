// The front's verdict reader as a thread: RedisJobQueue::ReadVerdicts in a loop on its own
// connection, as consumer `consumer` of the front group, until Stop(). Redis errors are
// logged and retried with the connection's backoff; the loop never ends on its own.
// Thread safety: Start and Stop from one thread (the owner's); `cb` runs on the reader
// thread, one verdict at a time (docs/queue.md: return true once the verdict is stored,
// and true again for a job already finished — it may come again after a front crash).
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "queue/job_queue.h"
#include "util/thread_annotations.h"

namespace kz::queue {

class VerdictReader {
 public:
  VerdictReader(QueueConfig config, std::string consumer, VerdictCallback cb);
  ~VerdictReader() { Stop(); }
  VerdictReader(const VerdictReader&) = delete;
  VerdictReader& operator=(const VerdictReader&) = delete;

  // Opens the queue (false and *err on a bad URL) and starts the thread.
  bool Start(std::string* err);
  // Stops the thread: returns within about kBlock (the blocking read's timeout), after the
  // verdict being handled, if any. Idempotent.
  void Stop();

  static constexpr std::chrono::milliseconds kBlock{1000};

 private:
  void Loop();
  const QueueConfig config_;
  const std::string consumer_;
  const VerdictCallback cb_;
  std::unique_ptr<RedisJobQueue> queue_;
  util::Mutex mu_;
  util::CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kz::queue
