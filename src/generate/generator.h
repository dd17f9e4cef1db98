// `kz generate`, Coder mode: for every task of a suite and every sample 0..n-1 not yet in
// the run, render the prompt, ask the endpoint (one request per sample, n = 1, so that
// usage is the sample's own and a rerun can ask for exactly what is missing), extract the
// code, and write the sample (run_log.h) through the engine of sample_run.h. The Proposer
// mode is proposer.h.
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "generate/endpoint.h"
#include "generate/prompt.h"
#include "generate/refine_load.h"

namespace kz::generate {

struct GenerateOptions {
  std::string suite_dir, out_dir;
  std::string backend = "cuda";  // "cuda" | "triton": the prompt and the records' backend
  std::string model;
  int samples = 1;               // per task
  int concurrency = 4;           // requests in flight at most
  Api api = Api::kChat;
  Sampling sampling;             // n is forced to 1; seed, when set, is seed + sample
  double deadline_s = 600;       // per request, retries included
  std::vector<std::string> task_ids;  // only these ("" = all)
  std::optional<RefineSource> refine;  // sequential refinement: the next turn of that run (chat only)
};

// Exit codes: 0 every sample of the run is done; 1 some requests failed (a rerun asks for
// them again); 2 usage (unreadable or empty suite, bad output directory); 130 stopped by
// `cancel` (SIGINT) — what finished is kept.
int RunGenerate(const GenerateOptions& options, const PromptTemplate& prompt, Endpoint* endpoint,
                std::atomic<bool>* cancel);

}  // namespace kz::generate
