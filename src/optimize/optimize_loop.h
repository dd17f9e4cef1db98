// The `kz optimize` loop (docs/optimize.md): K islands of verified candidates, one LLM
// request and at most one verification an iteration, every call reserved in the budget
// ledger before it starts, every outcome recorded before the state moves on. Deterministic
// given the endpoint's replies and the verifier's verdicts: a replay of both (the run's
// transcript and verdicts) writes the same files byte for byte, and a killed run resumes at
// the iteration it was in (answered from the transcript, so no request is paid twice).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "generate/endpoint.h"
#include "optimize/budget_ledger.h"
#include "optimize/experience.h"
#include "optimize/retrieval.h"
#include "optimize/run_store.h"
#include "verify/sample.h"

namespace kz::optimize {

struct OptimizeConfig {
  std::string task_path;          // absolute
  std::string backend = "triton";  // cuda | triton
  std::string model;              // sent to the endpoint (and part of each transcript key)
  std::string initial;            // a seed kernel verified before the first request ("" none)
  std::string experience;         // the experience library's SQLite file ("" none)
  // How the command reaches the model and the verifier (kept so --resume uses the same).
  std::string endpoint;           // the model's base URL (--resume may give another)
  bool cpu = false;               // verify on the CPU
  double timing_ci = 0.02;        // adaptive timing's relative interval half-width
  std::string sandbox = "best-effort";
  int islands = 2;
  int capacity = 8;               // elites per island
  int iterations = 8;             // LLM iterations at most; the budget may stop the run first
  int migrate_every = 4;
  uint64_t seed = 0;
  double temperature = 0.8;
  int max_tokens = 1024;
  double request_deadline_s = 300;
  double verify_timeout_s = 120;  // a verification's wall limit: its GPU-second reservation
  double compile_timeout_s = 300;  // a CUDA candidate's build limit: its compile reservation
  double min_verify_s = 5;        // less GPU (or compile) budget left than this: the run stops
  double near_duplicate = 0.95;   // token 3-shingle similarity that refuses a near duplicate
  bool ncu = false;               // profile each kept candidate's kernels with ncu (charged GPU-seconds)
  double ncu_timeout_s = 120;     // a profiling child's wall limit: its GPU-second reservation
  Amounts budget;                 // tokens, requests, gpu_s, compile_s; every entry > 0

  nlohmann::json ToJson() const;  // run.json (kz.optimize.run/1)
  static std::optional<OptimizeConfig> FromJson(const nlohmann::json& j, std::string* err);
};

// Verifies one sample within `timeout_s` (its run) and `compile_timeout_s` (its builds).
using VerifyOne = std::function<nlohmann::json(const verify::Sample&, double timeout_s, double compile_timeout_s)>;
// Profiles a kept candidate (its sample and verdict) with ncu within `timeout_s`: the
// verify::ProfileResult JSON ({"available", "reason", "seconds", "kernels", ...}); "seconds"
// is charged as GPU-seconds.
using ProfileOne = std::function<nlohmann::json(const verify::Sample&, const nlohmann::json& verdict, double timeout_s)>;

struct OptimizeIo {
  generate::Endpoint* endpoint = nullptr;
  VerifyOne verify;
  ProfileOne profile;  // with OptimizeConfig::ncu; unset: no profiles
  std::string prompt_template;  // prompts/optimize.v1.txt's text
  std::function<void(const std::string&)> progress;  // one line per event (stderr in the CLI)
  // The experience library (all three unset: none). retrieve(query, iteration): the best
  // matching records and how they were ranked (a replay answers from the source run's
  // retrievals.jsonl); learn(record, key): a
  // child cleared its parent; use(id, won, key): a record was applied. Keys are unique per
  // run and candidate, so a redone iteration never counts twice.
  std::function<Retrieval(const std::string&, int)> retrieve;
  std::function<void(const Experience&, const std::string&)> learn;
  std::function<void(int64_t, bool, const std::string&)> use;
};

enum class OptimizeExit { kDone = 0, kRefused = 2, kFailed = 3 };

// Runs (or resumes, when the store holds a state) the run; the store's run.json must hold
// `c`. kRefused with *err: the task cannot be verified, a corrupted state, another budget;
// kFailed with *err: a file could not be written, a replay without the answer it needs.
OptimizeExit RunOptimize(const OptimizeConfig& c, const RunStore& store, const OptimizeIo& io, std::string* err);

}  // namespace kz::optimize
