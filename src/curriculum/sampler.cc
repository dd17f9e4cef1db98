#include "curriculum/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kz::curriculum {

bool Sampler::Init(size_t n, const Stats* stats, const SamplerOptions& o, std::string* err) {
  if (n == 0) return *err = "the catalog is empty", false;
  if (o.k == 0 || o.k > n)
    return *err = "k must be between 1 and the catalog's " + std::to_string(n) + " APIs, got " + std::to_string(o.k),
           false;
  if (!(o.rho >= 0 && o.rho < 1)) return *err = "rho must be in [0, 1)", false;
  if (!(o.smoothing > 0)) return *err = "smoothing must be positive", false;
  if (stats && stats->n() != n)
    return *err = "statistics of " + std::to_string(stats->n()) + " APIs for a catalog of " + std::to_string(n), false;
  n_ = n, stats_ = stats, opt_ = o;
  rng_.seed(o.seed);
  epoch_ = 0, drawn_ = 0;
  NewEpoch();
  epoch_ = 0;
  return true;
}

double Sampler::Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

void Sampler::NewEpoch() {
  queue_.resize(n_);
  std::iota(queue_.begin(), queue_.end(), 0);
  for (size_t i = n_ - 1; i > 0; --i) std::swap(queue_[i], queue_[static_cast<size_t>(rng_() % (i + 1))]);
  covered_.assign(n_, false);
  cursor_ = covered_count_ = 0;
  ++epoch_;
}

void Sampler::Mark(size_t api) {
  if (!covered_[api]) covered_[api] = true, ++covered_count_;
}

size_t Sampler::NextAnchor() {
  if (covered_count_ == n_) NewEpoch();
  while (covered_[queue_[cursor_]]) ++cursor_;  // an uncovered one exists: covered_count_ < n_
  return queue_[cursor_];
}

size_t Sampler::DrawPartner(const std::vector<size_t>& set) {
  std::vector<double> w(n_, opt_.smoothing);
  for (size_t a : set) {
    w[a] = 0;
    if (stats_)
      for (size_t b = 0; b < n_; ++b)
        if (w[b] > 0) w[b] += stats_->Pair(a, b);
  }
  for (size_t a : set) w[a] = 0;
  double total = std::accumulate(w.begin(), w.end(), 0.0), x = Uniform() * total;
  for (size_t b = 0; b < n_; ++b) {
    if (w[b] > 0 && (x -= w[b]) < 0) return b;
  }
  for (size_t b = n_; b-- > 0;)  // rounding: the last API with weight
    if (w[b] > 0) return b;
  return 0;
}

ApiSetDraw Sampler::Next(const std::vector<std::vector<size_t>>& frontier) {
  ApiSetDraw d;
  uint64_t j = drawn_++;
  if (IsFrontierSlot(j, opt_.rho) && !frontier.empty()) {
    d.apis = frontier[static_cast<size_t>(rng_() % frontier.size())];
    d.from_frontier = true;
    for (size_t a : d.apis)
      if (a < n_) Mark(a);
    std::sort(d.apis.begin(), d.apis.end());
    d.epoch = epoch_;
    return d;
  }
  d.anchor = NextAnchor();
  d.epoch = epoch_;
  d.apis = {d.anchor};
  Mark(d.anchor);
  while (d.apis.size() < opt_.k) {
    size_t b = DrawPartner(d.apis);
    d.apis.push_back(b);
    Mark(b);
  }
  std::sort(d.apis.begin(), d.apis.end());
  return d;
}

size_t Sampler::CoverageBound(size_t n, double rho) {
  return static_cast<size_t>(std::ceil(static_cast<double>(n) / (1.0 - rho) - 1e-9));
}

bool Sampler::IsFrontierSlot(uint64_t j, double rho) {
  return std::floor(static_cast<double>(j + 1) * rho) > std::floor(static_cast<double>(j) * rho);
}

}  // namespace kz::curriculum
