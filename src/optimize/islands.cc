#include "optimize/islands.h"

#include <algorithm>

namespace kz::optimize {
using nlohmann::json;

Islands::Islands(int islands, size_t capacity, uint64_t seed)
    : archives_(size_t(std::max(1, islands))), capacity_(std::max<size_t>(1, capacity)), seed_(seed), rng_(seed) {}

uint64_t Islands::Draw(uint64_t n) {
  ++draws_;
  return rng_() % n;  // n is tiny against 2^64: the bias is negligible and the draw reproducible
}

bool Islands::Offer(int island, const Elite& e) {
  auto& a = archives_.at(size_t(island));
  auto it = a.find(e.cell);
  if (it != a.end()) {
    if (e.speedup_lo <= it->second.Hi()) return false;
    it->second = e;
    return true;
  }
  if (a.size() >= capacity_) {  // full: a new cell must beat the weakest elite, which goes
    auto weakest = std::min_element(a.begin(), a.end(), [](const auto& x, const auto& y) {
      return x.second.speedup_lo < y.second.speedup_lo;
    });
    if (e.speedup_lo <= weakest->second.speedup_lo) return false;
    a.erase(weakest);
  }
  a.emplace(e.cell, e);
  return true;
}

std::optional<Elite> Islands::PickParent(int island) {
  const auto& a = archives_.at(size_t(island));
  if (a.empty()) return std::nullopt;
  auto nth = [&](uint64_t k) { return std::next(a.begin(), std::ptrdiff_t(k))->second; };
  Elite x = nth(Draw(a.size())), y = nth(Draw(a.size()));
  return y.speedup_lo > x.speedup_lo ? y : x;
}

std::optional<Elite> Islands::BestOf(int island) const {
  const auto& a = archives_.at(size_t(island));
  if (a.empty()) return std::nullopt;
  return std::max_element(a.begin(), a.end(), [](const auto& x, const auto& y) {
           return x.second.speedup_lo < y.second.speedup_lo;
         })->second;
}

int Islands::Migrate() {
  std::vector<std::optional<Elite>> best;  // taken before any move: one step of the ring
  for (int i = 0; i < islands(); ++i) best.push_back(BestOf(i));
  int kept = 0;
  for (int i = 0; i < islands() && islands() > 1; ++i)
    if (best[size_t(i)]) kept += Offer((i + 1) % islands(), *best[size_t(i)]);
  return kept;
}

std::optional<Elite> Islands::Best() const {
  std::optional<Elite> best;
  for (int i = 0; i < islands(); ++i)
    if (auto b = BestOf(i); b && (!best || b->speedup_lo > best->speedup_lo)) best = b;
  return best;
}

json Islands::ToJson() const {
  json islands = json::array();
  for (const auto& a : archives_) {
    json elites = json::array();
    for (const auto& [cell, e] : a)
      elites.push_back({{"id", e.id}, {"cell", e.cell}, {"speedup", e.speedup}, {"speedup_lo", e.speedup_lo},
                        {"speedup_hi", e.speedup_hi}});
    islands.push_back(elites);
  }
  return {{"format", "kz.islands/1"}, {"capacity", capacity_}, {"seed", seed_}, {"draws", draws_}, {"islands", islands}};
}

std::optional<Islands> Islands::FromJson(const json& j, std::string* err) {
  try {
    if (j.at("format") != "kz.islands/1") throw std::runtime_error("format");
    const auto& list = j.at("islands");
    if (!list.is_array() || list.empty()) throw std::runtime_error("islands");
    Islands out(int(list.size()), j.at("capacity").get<size_t>(), j.at("seed").get<uint64_t>());
    for (size_t i = 0; i < list.size(); ++i)
      for (const auto& e : list[i])
        out.archives_[i][e.at("cell").get<std::vector<int>>()] = {e.at("id").get<std::string>(),
                                                                   e.at("cell").get<std::vector<int>>(),
                                                                   e.at("speedup").get<double>(),
                                                                   e.at("speedup_lo").get<double>(),
                                                                   e.value("speedup_hi", 0.0)};
    const uint64_t draws = j.at("draws").get<uint64_t>();
    if (draws > 100'000'000) throw std::runtime_error("draws: " + std::to_string(draws) + " is not a run's");
    out.rng_.discard(draws);  // the same engine state as when it was saved
    out.draws_ = draws;
    return out;
  } catch (const std::exception& e) {
    *err = std::string("not a kz.islands/1 file (corrupted run directory?): ") + e.what();
    return std::nullopt;
  }
}

}  // namespace kz::optimize
