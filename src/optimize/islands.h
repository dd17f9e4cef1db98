// The populations of `kz optimize` (docs/optimize.md, "The loop"): K islands, each a
// quality-diversity archive of verified candidates — one elite per behaviour cell (a cell is
// a few bucketed descriptors read from the verdict: memory- or compute-bound, fusion depth,
// ...), the elite being the candidate with the highest lower bound of its speedup interval.
// Parents are drawn by a seeded tournament of two among an island's elites (the higher lower
// bound wins); a candidate replaces its cell's elite only when its interval clears the
// elite's; every `migrate_every` iterations each island's best is offered to the next one
// (a ring). Pure bookkeeping; persisted with the draws made, so a resumed run draws the same
// parents.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::optimize {

struct Elite {
  std::string id;                 // the candidate's id in the run
  std::vector<int> cell;          // bucketed behaviour descriptors
  double speedup = 0;             // median
  double speedup_lo = 0;          // lower bound of its interval: what ranks candidates
  double speedup_hi = 0;          // upper bound (0: not given, the lower bound stands for it)
  double Hi() const { return speedup_hi > speedup_lo ? speedup_hi : speedup_lo; }
};

class Islands {
 public:
  // islands >= 1, capacity >= 1 (elites per island at most; the lowest lower bound goes).
  Islands(int islands, size_t capacity, uint64_t seed);

  // Offers a verified candidate to `island`: kept when its cell is empty or its interval
  // clears the cell's elite's (its lower bound above the elite's upper bound); into a full
  // archive a new cell enters when its lower bound beats the weakest elite's. True when kept.
  bool Offer(int island, const Elite& e);
  // A parent from `island` (nullopt when it is empty).
  std::optional<Elite> PickParent(int island);
  // Each island's best offered to the next (island i -> i+1 mod K); the number kept.
  int Migrate();

  int islands() const { return int(archives_.size()); }
  const std::map<std::vector<int>, Elite>& archive(int island) const { return archives_.at(size_t(island)); }
  std::optional<Elite> Best() const;  // over all islands

  nlohmann::json ToJson() const;  // kz.islands/1: the archives, seed, draws made
  static std::optional<Islands> FromJson(const nlohmann::json& j, std::string* err);

 private:
  uint64_t Draw(uint64_t n);  // uniform in [0, n)
  std::optional<Elite> BestOf(int island) const;
  std::vector<std::map<std::vector<int>, Elite>> archives_;
  size_t capacity_;
  uint64_t seed_, draws_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace kz::optimize
