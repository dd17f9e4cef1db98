#include "queue/verdict_reader.h"

#include "util/log.h"

namespace kz::queue {

VerdictReader::VerdictReader(QueueConfig config, std::string consumer, VerdictCallback cb)
    : config_(std::move(config)), consumer_(std::move(consumer)), cb_(std::move(cb)) {}

bool VerdictReader::Start(std::string* err) {
  queue_ = RedisJobQueue::Open(config_, err);
  if (!queue_) return false;
  thread_ = std::thread([this] { Loop(); });
  return true;
}

void VerdictReader::Stop() {
  {
    util::MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void VerdictReader::Loop() {
  std::string err, last_err;
  bool ready = false;  // streams and groups set up
  for (;;) {
    {
      util::MutexLock lock(mu_);
      if (stop_) return;
    }
    bool ok = (ready = ready || queue_->Setup(&err)) && queue_->ReadVerdicts(consumer_, cb_, kBlock, &err) >= 0;
    if (ok) {
      if (!last_err.empty()) util::LogInfo("queue: verdict reader " + consumer_ + " reading again");
      last_err.clear();
      continue;
    }
    if (err != last_err) util::LogWarn("queue: verdict reader " + consumer_ + ": " + err + " (retrying)");
    last_err = err;
    const auto until = std::chrono::steady_clock::now() + std::max(queue_->RetryDelay(), std::chrono::milliseconds{200});
    util::MutexLock lock(mu_);
    while (!stop_ && cv_.WaitUntil(mu_, until)) {
    }
  }
}

}  // namespace kz::queue
