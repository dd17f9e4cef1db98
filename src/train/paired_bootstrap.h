// Paired bootstrap over tasks (docs/training.md, "The report"): the difference of two
// evaluations' means on the same tasks, with a percentile interval from resampling tasks
// (both evaluations resampled together, so a task's pairing is kept). Seeded: the same
// inputs give the same interval.
#pragma once
#include <cstdint>
#include <vector>

namespace kz::train {

struct PairedInterval {
  double delta = 0;        // mean(after) - mean(before)
  double lo = 0, hi = 0;   // the central `level` percentile interval of the resampled deltas
  int tasks = 0;
  int resamples = 0;
  bool excludes_zero() const { return lo > 0 || hi < 0; }
};

// before[i] and after[i] are one task's scores (e.g. 0/1 correctness). Sizes must match;
// empty input gives an all-zero interval. level in (0, 1), e.g. 0.95.
PairedInterval PairedBootstrap(const std::vector<double>& before, const std::vector<double>& after, int resamples,
                               double level, uint64_t seed);

}  // namespace kz::train
