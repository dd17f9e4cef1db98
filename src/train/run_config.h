// The run config of `kz train --config RUN.toml` (docs/training.md, "The run config"): every
// key typed, defaulted and range-checked before any model or GPU work; an unknown key or
// table is an error naming it (a typo must not silently fall back to a default).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "rewards/ca_grpo.h"
#include "rewards/mirror_pop.h"
#include "rewards/multi_turn.h"

namespace kz::train {

struct RunConfig {
  // [run]
  uint64_t seed = 1;
  int rounds = 1;
  // [model]
  std::string model;               // a local path: HF directory or .gguf (required)
  std::string device = "auto";     // auto | cpu | cuda | cuda:N
  std::string dtype = "float32";
  double lr = 1e-5;                // the optimiser's; [sft] lr and [coder] lr override it per phase
  int lora_r = 0;                  // 0: full fine-tuning
  // [sft] (the cold start; skipped when data is empty)
  std::string sft_data;            // kz train teacher's sft.jsonl
  int sft_epochs = 1, sft_batch = 8;
  double sft_lr = 0;               // 0: [model] lr
  // [coder] (CA-GRPO steps)
  std::string coder_tasks;         // directory of task files (KernelBench format)
  int tasks_per_step = 4, samples_per_task = 4, steps_per_round = 1;
  int max_new_tokens = 512;
  double temperature = 1.0, clip_eps = 0.2, kl_coef = 0;
  double coder_lr = 0;             // 0: [model] lr (RL usually wants a smaller one than SFT)
  std::string backend = "triton";  // the Coder's kernel language (its prompt template)
  double coder_budget_s = 0;       // > 0: Coder steps stop once their wall seconds reach it (a fair
                                   // comparison of two runs: one budget; later steps are skipped)
  // [proposer] (the Proposer phase before each round's Coder phase; off when steps_per_round
  // is 0): API sets from the sampler and the frontier pool -> modules -> three-stage
  // validation -> Coder attempts -> Frontier Reward -> a policy-gradient step (docs/training.md)
  struct Proposer {
    int steps_per_round = 0;
    int sets_per_step = 4, samples_per_set = 4;  // a group = the samples of one API set
    int coder_samples = 4;                       // Coder attempts per valid module (p = s / n)
    int k = 3;                                   // APIs per set
    double rho = 0.25;                           // share of sets drawn from the frontier pool
    int max_new_tokens = 768;
    double temperature = 1.0, lr = 0;            // lr 0: [model] lr
    double invalid_penalty = -1.0;
    int freeze_after_round = 0;                  // > 0: no Proposer step after that round (the ablation)
    std::string model;                           // "" : [model] path (its own copy of the weights)
    std::string catalog;                         // "" : the shipped API catalog
    std::string stats;                           // co-occurrence statistics ("" : uniform partners)
  } proposer;
  // [rewards]
  rewards::CaGrpoOptions rewards;
  // [multi_turn] (refinement with the verifier's feedback; off at turns = 1; docs/training.md)
  struct MultiTurn {
    int turns = 1;                 // turns per trajectory of a Coder step
    bool stop_on_correct = true;   // a correct turn closes its trajectory (else: asked to be faster)
    int feedback_chars = 1500;     // the verifier's facts per feedback (refine_prompt.h)
    int context_chars = 24000;     // the conversation's bound: earlier replies omitted first
    rewards::MultiTurnOptions returns;  // gamma, eta (PrimeEcho), prime_echo; baseline: [rewards]'
  } multi_turn;
  // [retry] Buffered Dynamic Retry (off at capacity = 0): all-fail groups wait and come back
  struct Retry {
    int capacity = 0;     // tasks the buffer holds at most
    int max_retries = 2;  // times one task comes back
    int per_step = 1;     // buffered tasks added to each Coder step
    int samples = 0;      // samples of a retried task's group (0: 2 x samples_per_task)
  } retry;
  // [mirror_pop] (off unless enabled): sequences whose sampling and training log-probabilities
  // disagree are filtered from the loss (one extra scoring pass per step)
  struct MirrorPop {
    bool enabled = false;
    rewards::MirrorPopOptions bounds;
  } mirror_pop;
  // [verify]
  bool verify_cpu = false;
  double verify_timeout_s = 120;
  int verify_jobs = 1;
  double verify_timing_ci = 0;     // adaptive timing of correct samples (0: the fixed rule)
  int verify_concurrency = 1;      // samples run at once on the GPU through the gate (docs/throughput.md)
  // [rft] diversity-preserving rejection fine-tuning between rounds (off at per_task = 0): after a
  // round's Coder steps, an SFT on the run's verified-correct samples so far (kz train rft's set)
  int rft_per_task = 0;
  int rft_epochs = 1;
  // [eval] (after every round; skipped when tasks is empty)
  std::string eval_tasks;
  int eval_max_new_tokens = 512;
  int eval_turns = 1;              // > 1: refinement at evaluation too (first- and best-turn pass@1)
  bool eval_baseline = true;       // r0.eval: the model RL starts from (off: runs that share one)
};

// Parses TOML text; false with *err naming the table and key at fault (unknown keys, wrong
// types, out-of-range values, a missing model). Relative paths stay as written: they are
// resolved against the config file's directory by the caller.
bool ParseRunConfig(const std::string& toml_text, RunConfig* out, std::string* err);

}  // namespace kz::train
