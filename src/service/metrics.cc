#include "service/metrics.h"

namespace kz::service {

namespace {
constexpr const char* kCounterNames[] = {"accepted", "deduplicated", "rejected_queue_full",
                                         "bad_request", "failed"};
static_assert(std::size(kCounterNames) == static_cast<size_t>(Counter::kCount));
}  // namespace

void Metrics::CountVerdict(std::string_view status) {
  if (auto s = verify::ParseStatus(status))
    verdicts_[static_cast<size_t>(*s)].fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::Render(size_t queue_depth, bool running) const {
  std::string out;
  out += "# HELP kz_queue_depth Jobs accepted and waiting for the GPU slot.\n# TYPE kz_queue_depth gauge\n";
  out += "kz_queue_depth " + std::to_string(queue_depth) + "\n";
  out += "# HELP kz_jobs_running Jobs running now (0 or 1: one slot).\n# TYPE kz_jobs_running gauge\n";
  out += "kz_jobs_running " + std::string(running ? "1" : "0") + "\n";
  out += "# HELP kz_requests_total Verify requests by outcome.\n# TYPE kz_requests_total counter\n";
  for (size_t i = 0; i < counters_.size(); ++i)
    out += "kz_requests_total{outcome=\"" + std::string(kCounterNames[i]) + "\"} " +
           std::to_string(counters_[i].load(std::memory_order_relaxed)) + "\n";
  out += "# HELP kz_jobs_done_total Jobs finished by this process, by verdict status.\n"
         "# TYPE kz_jobs_done_total counter\n";
  for (size_t i = 0; i < verdicts_.size(); ++i)
    out += "kz_jobs_done_total{status=\"" + std::string(verify::StatusName(static_cast<verify::Status>(i))) +
           "\"} " + std::to_string(verdicts_[i].load(std::memory_order_relaxed)) + "\n";
  return out;
}

}  // namespace kz::service
