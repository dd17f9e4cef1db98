// `kz propose --endpoint URL --sets N --out DIR`: the Proposer loop in one command
// (docs/curriculum.md, "The Proposer loop"): draw N API sets (DIR/sets.jsonl), ask the model
// for modules through `kz generate --proposer`'s library call (generate::RunPropose: the
// Proposer prompt, src/generate's client, extraction, DIR/proposals.jsonl and DIR/modules/),
// then validate the run (`kz propose validate --proposals DIR`). Resumable: a rerun asks only
// for the samples DIR/proposals.jsonl lacks and validates only what DIR/validation.jsonl lacks.
#pragma once
#include <optional>
#include <string>

#include "cli/propose_validate.h"
#include "curriculum/sampler.h"

namespace kz::cli {

struct LoopArgs {
  std::string endpoint, replay, record, model, api_key_env = "OPENAI_API_KEY", prompt, stats, pool_for_sets;
  size_t sets = 0;
  int samples = 1, concurrency = 4;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<long long> seed;
  double deadline_s = 600;
  curriculum::SamplerOptions sampler;
};

// 0: every sample there and validated; 1: some requests failed (rerun to retry them) or
// bad lines; 2: usage (no model, unreadable prompt or transcript, bad sampler options).
int RunProposeLoop(const LoopArgs& loop, ValidateArgs validate, const curriculum::Catalog& catalog,
                   const std::string& argv0);

}  // namespace kz::cli
