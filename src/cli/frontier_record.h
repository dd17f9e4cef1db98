// The Frontier Reward at the command line (docs/curriculum.md, "Frontier Reward").
#pragma once
#include <cstdint>
#include <string>

namespace kz::cli {

// `kz frontier record`: adds the Coder's attempts and successes in `round` to module `id`;
// prints the module's totals, p̂ and status. 2 for a missing pool or module, bad counts.
int RecordAttempts(const std::string& db, int64_t id, int round, int attempts, int successes);

// `kz propose rewards --proposals RUN [--pool DB]`: the Frontier Reward of every record of
// RUN/validation.jsonl (invalid: `penalty`; valid: 1 - 2|p̂ - 0.5| from the pool's attempts,
// null while it has none) into RUN/rewards.jsonl and stdout.
int ProposalRewards(const std::string& run, const std::string& db, double penalty);

}  // namespace kz::cli
