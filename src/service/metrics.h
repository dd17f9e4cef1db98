// Counters of `kz serve`, rendered in the Prometheus text format. Lock-free: any thread
// may count; Render may run concurrently with counting (values are relaxed snapshots).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "verify/status.h"

namespace kz::service {

enum class Counter { kAccepted, kDeduplicated, kRejectedFull, kBadRequest, kFailed, kCount };

class Metrics {
 public:
  void Count(Counter c) { counters_[static_cast<size_t>(c)].fetch_add(1, std::memory_order_relaxed); }
  // A finished verdict with this status (an unknown name is ignored).
  void CountVerdict(std::string_view status);
  uint64_t Get(Counter c) const { return counters_[static_cast<size_t>(c)].load(std::memory_order_relaxed); }
  std::string Render(size_t queue_depth, bool running) const;

 private:
  static constexpr size_t kStatuses = static_cast<size_t>(verify::Status::kNotRun) + 1;
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Counter::kCount)> counters_{};
  std::array<std::atomic<uint64_t>, kStatuses> verdicts_{};
};

}  // namespace kz::service
