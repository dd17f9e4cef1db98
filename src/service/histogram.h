// A cumulative histogram in the Prometheus text format, with fixed bucket bounds.
// Thread-safe: Observe and Render may run on any thread (one mutex).
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kz::service {

class Histogram {
 public:
  // Upper bounds, ascending; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  // `name`_bucket{`labels`,le="..."} (cumulative, +Inf last), `name`_sum and `name`_count;
  // `labels` is `key="value",...` or "".
  std::string Render(const std::string& name, const std::string& labels) const;
  uint64_t count() const;

 private:
  const std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // GUARDED_BY(mu_): per bucket, not cumulative; last is +Inf
  double sum_ = 0;                // GUARDED_BY(mu_)
};

// Prometheus' text form of a number: shortest round-trip decimal, "+Inf" for infinity.
std::string PromNumber(double v);

// Seconds buckets for pipeline stages: 5 ms .. 30 min.
std::vector<double> StageBuckets();

}  // namespace kz::service
