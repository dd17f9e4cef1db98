// `kz frontier record` (the Coder's attempts on a pool module) and `kz propose rewards`
// (the Frontier Reward of every validated proposal of a run): docs/curriculum.md.
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/frontier_record.h"
#include "curriculum/frontier_pool.h"
#include "rewards/frontier.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;
}  // namespace

int RecordAttempts(const std::string& db, int64_t id, int round, int attempts, int successes) {
  std::string err;
  if (!util::PathExists(db)) return UsageError("kz", "no frontier pool at " + db);
  auto pool = cur::FrontierPool::Open(db, &err);
  if (!pool || !pool->RecordAttempts(id, round, attempts, successes, &err)) return UsageError("kz", err);
  std::vector<cur::PoolEntry> entries;
  if (!pool->List(&entries, &err)) return UsageError("kz", err);
  for (const auto& e : entries)
    if (e.id == id)
      std::cout << json{{"id", id},
                        {"attempts", e.attempts},
                        {"successes", e.successes},
                        {"p_hat", e.p_hat ? json(*e.p_hat) : json(nullptr)},
                        {"status", e.status}}
                       .dump()
                << "\n";
  return 0;
}

int ProposalRewards(const std::string& run, const std::string& db, double penalty) {
  std::string err;
  std::map<std::string, cur::PoolEntry> by_hash;
  if (!db.empty()) {
    auto pool = cur::FrontierPool::Open(db, &err);
    std::vector<cur::PoolEntry> entries;
    if (!pool || !pool->List(&entries, &err)) return UsageError("kz", err);
    for (auto& e : entries) by_hash.emplace(e.module.hash, std::move(e));
  }
  scoring::LoadedLog log = scoring::LoadVerdictLog(run + "/validation.jsonl");
  if (log.records.empty()) return UsageError("kz", run + "/validation.jsonl: no validated proposals");
  std::string out;
  size_t rewarded = 0, pending = 0;
  for (const auto& [_, r] : log.records) {
    rewards::FrontierOutcome o{r.value("valid", false), 0, 0};
    auto it = by_hash.find(r.value("canonical_hash", ""));
    if (o.valid && it != by_hash.end()) o.attempts = it->second.attempts, o.successes = it->second.successes;
    double reward = 0;
    json j = {{"set", r.value("set", "")}, {"sample", r.value("sample", 0)}, {"valid", o.valid}};
    if (rewards::FrontierReward(o, rewards::RewardOptions{penalty}, &reward, &err)) {
      j["reward"] = reward;
      ++rewarded;
    } else {
      j["reward"] = nullptr;  // valid, but the Coder has not tried it yet
      j["why"] = err;
      ++pending;
    }
    if (o.valid && o.attempts) j["p_hat"] = static_cast<double>(o.successes) / o.attempts;
    out += j.dump() + "\n";
  }
  if (!util::WriteFileAtomic(run + "/rewards.jsonl", out, &err)) return UsageError("kz", err);
  std::cout << out;
  std::cerr << "kz propose rewards: " << rewarded << " rewarded, " << pending << " valid without Coder attempts\n";
  return 0;
}

}  // namespace kz::cli
