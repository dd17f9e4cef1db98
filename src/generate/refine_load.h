// `kz generate --refine PREV_RUN --verdicts VERDICTS.jsonl`: the next turn of a sequential
// (multi-turn) run, as `kz bench --turns` drives it (docs/generate.md, "Sequential
// refinement"). For every task and sample of the previous turn's run: a sample the verifier
// judged correct is closed (not asked again); any other is asked again with its whole
// conversation — the previous turn's request (the task prompt on turn 1), its reply (the
// extracted code in a ```python block, or the raw reply when it had no code) and the
// verifier's feedback (refine_prompt.h). Pure apart from reading the two files.
#pragma once
#include <string>
#include <vector>

#include "generate/endpoint.h"
#include "generate/refine_prompt.h"
#include "generate/sample_run.h"

namespace kz::generate {

struct RefineSource {
  std::string prev_run;  // the previous turn's run directory (generations.jsonl)
  std::string verdicts;  // kz bench's verdicts.jsonl of that run
  RefineOptions prompt;
};

struct RefineCounts {
  int turn = 2;                 // the previous run's turn + 1
  size_t open = 0;              // samples asked again
  size_t closed_correct = 0;    // judged correct before: not asked
  size_t missing_previous = 0;  // no record in the previous run (not asked)
  size_t unverified = 0;        // a record with code but no verdict (not asked: verify it first)
  int omitted_replies = 0, feedback_cut = 0;
};

// Fills each unit's per-sample conversations (an empty one: not asked). false with *err when
// the previous run has no generations.jsonl.
bool LoadRefinement(const RefineSource& src, int samples, std::vector<Unit>* units, RefineCounts* counts,
                    std::string* err);

}  // namespace kz::generate
