// Which queued job runs next: the highest priority first; within it, round-robin between
// clients — the oldest job of the client served least recently (a client never served
// counts as least recent; ties go to the older job). A pure function of the queue and
// the per-client service record, so one client's 1,000-job batch cannot starve another
// client's single job.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kz::service {

struct QueuedJob {
  std::string id;
  int64_t priority = 0;
  std::string client;
  uint64_t seq = 0;  // arrival order: smaller is older
};

// client -> the tick at which it was last served (ticks grow; absent: never served).
using ServiceRecord = std::map<std::string, uint64_t>;

// The index in `queue` of the job to run next; nullopt when the queue is empty.
std::optional<size_t> PickNext(const std::vector<QueuedJob>& queue, const ServiceRecord& served);

}  // namespace kz::service
