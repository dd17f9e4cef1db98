#include "service/histogram.h"

#include <charconv>
#include <cmath>

namespace kz::service {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  std::lock_guard lock(mu_);
  ++counts_[i];
  sum_ += value;
}

uint64_t Histogram::count() const {
  std::lock_guard lock(mu_);
  uint64_t n = 0;
  for (auto c : counts_) n += c;
  return n;
}

std::string Histogram::Render(const std::string& name, const std::string& labels) const {
  std::vector<uint64_t> counts;
  double sum;
  {
    std::lock_guard lock(mu_);
    counts = counts_;
    sum = sum_;
  }
  std::string sep = labels.empty() ? "" : ",";
  std::string out;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    std::string le = i < bounds_.size() ? PromNumber(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + sep + "le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + PromNumber(sum) + "\n";
  out += name + "_count" + braces + " " + std::to_string(cumulative) + "\n";
  return out;
}

std::string PromNumber(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::vector<double> StageBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800};
}

}  // namespace kz::service
