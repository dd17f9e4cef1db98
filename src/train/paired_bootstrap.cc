#include "train/paired_bootstrap.h"

#include <algorithm>
#include <cmath>

#include "train/mix.h"

namespace kz::train {

PairedInterval PairedBootstrap(const std::vector<double>& before, const std::vector<double>& after, int resamples,
                               double level, uint64_t seed) {
  PairedInterval out;
  size_t n = std::min(before.size(), after.size());
  out.tasks = int(n);
  if (n == 0 || resamples <= 0) return out;
  std::vector<double> diff(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += diff[i] = after[i] - before[i];
  out.delta = sum / double(n);
  std::vector<double> deltas(static_cast<size_t>(resamples));
  uint64_t state = seed;
  for (int r = 0; r < resamples; ++r) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += diff[Mix64(state += 0x9E3779B97F4A7C15ull) % n];  // splitmix64
    deltas[size_t(r)] = s / double(n);
  }
  std::sort(deltas.begin(), deltas.end());
  double tail = (1 - level) / 2;
  auto at = [&](double q) {
    size_t k = size_t(std::clamp(std::floor(q * double(resamples - 1) + 0.5), 0.0, double(resamples - 1)));
    return deltas[k];
  };
  out.lo = at(tail);
  out.hi = at(1 - tail);
  out.resamples = resamples;
  return out;
}

}  // namespace kz::train
