// API-set sampler (docs/curriculum.md "Sampler"): sets of k catalog APIs, the first (the
// anchor) from a seeded coverage queue, the others drawn with weight
//   w(b) = smoothing + sum over a already in the set of pairs(a, b)
// (co-occurrence counts of the statistics; without statistics every w(b) = smoothing).
// Set j is a frontier slot when floor((j+1) rho) > floor(j rho): a share rho of sets,
// spread evenly, repeats an API set of the frontier pool (a fresh set when it is empty).
//
// Coverage guarantee: every fresh set's anchor is an API not yet covered in the current
// epoch, so an epoch (all n APIs covered once) takes at most n fresh sets; among the first m
// sets at least m - floor(m rho) are fresh. Hence every catalog API appears in the first
//   B = ceil(n / (1 - rho)) sets,
// and again in every window of 2B consecutive sets. Same seed, statistics and frontier:
// the same sets (mt19937_64 and our own draws, no std distributions).
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "curriculum/cooccur.h"

namespace kz::curriculum {

struct SamplerOptions {
  size_t k = 3;            // APIs per set
  double rho = 0.0;        // share of frontier slots, in [0, 1)
  uint64_t seed = 1;
  double smoothing = 0.5;  // weight of an API that never co-occurs with the set
};

struct ApiSetDraw {
  std::vector<size_t> apis;  // sorted catalog indices
  bool from_frontier = false;
  size_t anchor = 0;         // fresh sets: the coverage queue's API
  size_t epoch = 0;
};

// One thread.
class Sampler {
 public:
  // `stats` may be null (uniform draws); it must outlive the sampler. False with *err for
  // k of 0 or above n, rho outside [0, 1), statistics of another catalog size.
  bool Init(size_t n, const Stats* stats, const SamplerOptions& options, std::string* err);
  ApiSetDraw Next(const std::vector<std::vector<size_t>>& frontier);

  static size_t CoverageBound(size_t n, double rho);  // B above
  static bool IsFrontierSlot(uint64_t j, double rho);

 private:
  double Uniform();  // [0, 1) from 53 bits of the engine
  void NewEpoch();
  size_t NextAnchor();
  size_t DrawPartner(const std::vector<size_t>& set);
  void Mark(size_t api);

  size_t n_ = 0;
  const Stats* stats_ = nullptr;
  SamplerOptions opt_;
  std::mt19937_64 rng_;
  std::vector<size_t> queue_;
  std::vector<bool> covered_;
  size_t cursor_ = 0, covered_count_ = 0, epoch_ = 0;
  uint64_t drawn_ = 0;
};

}  // namespace kz::curriculum
