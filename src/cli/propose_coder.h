// `kz propose ... --coder-endpoint URL --coder-samples n`: the Frontier Reward end to end
// (docs/curriculum.md, "Frontier Reward end to end"). After validation, the Coder is asked
// for n kernels for every valid module of the run (RUN/valid, a KernelBench-layout suite)
// and each is verified: one child `kz bench --suite RUN/valid --out RUN/coder_bench
// --generate RUN/coder -- <kz generate's options>` (the verifier in process in kz bench, or
// through kz serve with --coder-server). Both logs resume, so a rerun asks and verifies only
// what is missing. The verdicts are counted per module (curriculum/coder_tally.h), added
// once to the frontier pool (RUN/coder_recorded.jsonl names the modules recorded), and every
// proposal of RUN/validation.jsonl gets its reward in RUN/rewards.jsonl.
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "rewards/frontier.h"

namespace kz::cli {

struct CoderArgs {
  std::string endpoint, replay, record, model, backend, server, api_key_env;
  int samples = 0;  // Coder samples per valid module; 0: no Coder
  int concurrency = 4;
  std::optional<int> max_tokens;
  std::optional<double> temperature;
  std::optional<double> verify_timeout_s;  // kz bench --timeout
  double deadline_s = 6 * 3600;            // the whole kz bench child
  std::string pool;                        // record the attempts here ("" = nowhere)
  int round = 0;
  rewards::RewardOptions reward;
};

// The loop's --coder-* options (and --invalid-penalty) on `propose`; they fill *args.
void AddCoderOptions(CLI::App* propose, CoderArgs* args);

// 0: every valid module has its n verdicts; 1: some are missing (requests failed: rerun);
// 2: usage or unreadable run; 4: kz bench failed (its stderr tail shown).
int RunCoderRound(const CoderArgs& args, const std::string& run, const std::string& argv0);

}  // namespace kz::cli
