// `kz frontier export --format verl` (docs/curriculum.md, "Frontier pool"): the pool's
// modules as verl training rows. The rows are built here (DIR/verl.jsonl, one a line:
// data_source, prompt = the Coder prompt of the module as chat messages, ability,
// reward_model {style, ground_truth = the module's source}, extra_info {index, id, hash,
// api_set, status, attempts, successes, p_hat, split}); DIR/train.parquet is written from
// them by scripts/verl_parquet.py (pyarrow: Debian has no C++ parquet library).
#pragma once
#include <string>
#include <vector>

#include "curriculum/frontier_pool.h"

namespace kz::cli {

// 0: both files written; 2: a file could not be written, no prompt template, or the
// converter failed (verl.jsonl is kept; the message says why).
int ExportVerl(const std::vector<curriculum::PoolEntry>& entries, const std::string& out, const std::string& backend);

}  // namespace kz::cli
