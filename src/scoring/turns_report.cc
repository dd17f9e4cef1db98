#include "scoring/turns_report.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "scoring/metrics.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"

namespace kz::scoring {
namespace {
using nlohmann::json;

struct Outcome {
  bool correct = false, fast = false;
};
using Chain = std::map<int, Outcome>;                        // turn -> outcome
using Chains = std::map<std::string, std::map<int, Chain>>;  // task -> sample -> chain

// One turn into the chains: every sample the turn's generations.jsonl holds is asked at that
// turn (failed unless a verdict says otherwise: a reply without code has none); the number of
// samples asked.
size_t ReadTurn(const std::string& generations, const std::string& verdicts, int turn, Chains* chains) {
  std::string text, err;
  size_t n = 0;
  if (util::ReadFile(generations, &text, &err)) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      json r = json::parse(line, nullptr, false);
      if (r.is_discarded() || !r.is_object() || !r.contains("task") || !r["task"].is_string() ||
          !r.contains("sample") || !r["sample"].is_number_integer())
        continue;
      (*chains)[r["task"].get<std::string>()][r["sample"].get<int>()][turn] = {};
      ++n;
    }
  }
  for (const auto& [key, r] : LoadVerdictLog(verdicts).records) {
    Outcome o;
    o.correct = r.value("status", "") == "correct";
    o.fast = o.correct && r.contains("speedup") && r["speedup"].is_number() && r["speedup"].get<double>() > 1.0;
    auto& chain = (*chains)[r["task"].get<std::string>()][r["sample"].get<int>()];
    n += chain.count(turn) == 0;  // verified but not in the generations (given another way)
    chain[turn] = o;
  }
  return n;
}

std::string TurnDir(const std::string& base, int turn) {
  return turn == 1 ? base : base + "/turn" + std::to_string(turn);
}

// A reading's metrics over tasks; pick(chain) -> the outcome that reading takes.
template <typename Pick>
json Reading(const Chains& chains, Pick pick) {
  double p1 = 0, pn = 0, f1 = 0;
  for (const auto& [task, samples] : chains) {
    int n = int(samples.size()), c = 0, f = 0;
    for (const auto& [s, chain] : samples) {
      Outcome o = pick(chain);
      c += o.correct;
      f += o.fast;
    }
    p1 += double(c) / n;
    pn += PassAtK(n, c, n);
    f1 += double(f) / n;
  }
  double t = chains.empty() ? 1 : double(chains.size());
  return {{"pass_at_1", p1 / t}, {"pass_at_n", pn / t}, {"fast_1_at_1", f1 / t}};
}

std::string Fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

}  // namespace

bool WriteTurnsReport(const std::string& out, const std::string& run, int turns, json* summary, std::string* err) {
  Chains chains;
  json per_turn = json::array();
  for (int t = 1; t <= turns; ++t) {
    size_t n = ReadTurn(TurnDir(run, t) + "/generations.jsonl", TurnDir(out, t) + "/verdicts.jsonl", t, &chains);
    if (t == 1 && n == 0)
      return *err = "no samples in " + run + "/generations.jsonl or " + out + "/verdicts.jsonl", false;
    size_t correct = 0;
    for (const auto& [task, samples] : chains)
      for (const auto& [s, chain] : samples)
        if (auto it = chain.find(t); it != chain.end()) correct += it->second.correct;
    per_turn.push_back({{"turn", t}, {"asked", n}, {"correct", correct}});
  }
  for (auto& [task, samples] : chains)  // a chain must start at turn 1 (else it is not ours)
    for (auto it = samples.begin(); it != samples.end();) it = it->second.count(1) ? std::next(it) : samples.erase(it);
  json first = Reading(chains, [](const Chain& c) { return c.at(1); });
  json best = Reading(chains, [](const Chain& c) {
    Outcome o;
    for (const auto& [t, x] : c) o.correct = o.correct || x.correct, o.fast = o.fast || x.fast;
    return o;
  });
  json last = Reading(chains, [](const Chain& c) { return c.rbegin()->second; });
  *summary = {{"format", "kz.bench_turns/1"}, {"turns", turns},    {"tasks", chains.size()}, {"per_turn", per_turn},
              {"first_turn", first},          {"best_turn", best}, {"last_turn", last}};
  std::ostringstream md;
  md << "# Sequential refinement: " << turns << " turns over " << chains.size() << " tasks\n\n"
     << "| reading | pass@1 | pass@n | fast_1@1 |\n|---|---|---|---|\n";
  for (const auto& [name, r] : {std::pair{"first turn", first}, {"best turn", best}, {"last turn", last}})
    md << "| " << name << " | " << Fixed(r["pass_at_1"]) << " | " << Fixed(r["pass_at_n"]) << " | "
       << Fixed(r["fast_1_at_1"]) << " |\n";
  md << "\n| turn | samples asked | correct |\n|---|---|---|\n";
  for (const auto& t : per_turn) md << "| " << t["turn"] << " | " << t["asked"] << " | " << t["correct"] << " |\n";
  return util::WriteFileAtomic(out + "/turns.json", summary->dump(1) + "\n", err) &&
         util::WriteFileAtomic(out + "/turns.md", md.str(), err);
}

}  // namespace kz::scoring
