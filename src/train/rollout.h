// One rollout of the Coder: prompts for a set of tasks, n samples each from the trainer
// backend, the code extracted from each reply, and every piece of code verified. Shared by
// the CA-GRPO step and the held-out evaluation. Resumable inside a unit: the generation is
// kept in <unit>/generation.json (an interrupted unit does not sample again) and each
// verdict in <unit>/verdicts.jsonl, keyed by task, sample and the code's XXH3 (no sample
// is verified twice).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/trainer_backend.h"
#include "verify/sample.h"

namespace kz::train {

struct RolloutTask {
  std::string id;      // file stem
  std::string path;    // task file
  std::string source;  // its text
};

struct RolloutOptions {
  int n = 1;                  // samples per task
  double temperature = 1.0;   // 0: greedy
  int max_new_tokens = 512;
  int seed = 0;
  std::string backend = "triton";
  std::string prompt_template;  // the Coder template's text ({{task_source}}, {{task_name}}, ...)
};

struct RolloutSample {
  size_t task = 0;  // index into the tasks
  int sample = 0;   // 0..n-1
  std::vector<int> prompt_ids, completion_ids;
  std::vector<double> logprobs;
  std::string reply;          // the model's whole reply (the next turn's conversation quotes it)
  std::string code;           // "" when the reply had none
  nlohmann::json verdict;     // the verifier's, or {"status": "no_code", "reason": ...}
  bool correct = false;
  std::optional<double> speedup;  // stages.timing.speedup of a correct, timed sample
};

// Verifies samples, calling back once per verdict (index into the samples) as they finish.
using VerifyFn = std::function<void(const std::vector<verify::Sample>&,
                                    const std::function<void(size_t, const nlohmann::json&)>&)>;

// The samples of `path` (kz.generation/1) when it holds all of req's, else a fresh generation
// written there first: an interrupted unit does not sample again. Any policy, any prompts.
bool GenerateOnce(TrainerBackend& backend, const GenerateRequest& req, const std::string& path, GenerateResult* g,
                  std::string* err, TrainerError* terr);

// The Coder's prompt for a task (the template rendered as `kz generate` renders it).
bool RenderCoderPrompt(const RolloutTask& t, const RolloutOptions& o, std::string* prompt, std::string* err);

// Extracts the code of each generated sample and verifies it (resuming from
// dir/verdicts.jsonl; candidates written to dir/candidates/). owners[k] is generated sample
// k's (task, sample). `out` gets one RolloutSample per generated sample, in order.
bool VerifyReplies(const VerifyFn& verify, const std::vector<RolloutTask>& tasks, const std::string& backend,
                   const GenerateResult& g, const std::vector<std::pair<size_t, int>>& owners,
                   const std::string& dir, std::vector<RolloutSample>* out, std::string* err);

// Runs (or resumes) a rollout in `unit_dir`. false with *err (and *terr for a backend
// failure) when it cannot finish; what was done stays on disk for the next attempt.
bool Rollout(TrainerBackend& backend, const VerifyFn& verify, const std::vector<RolloutTask>& tasks,
             const RolloutOptions& o, const std::string& unit_dir, std::vector<RolloutSample>* out,
             std::string* err, TrainerError* terr);

// Task files of a directory (*.py, sorted by name); false when it has none or cannot be read.
bool LoadTasks(const std::string& dir, std::vector<RolloutTask>* out, std::string* err);

}  // namespace kz::train
