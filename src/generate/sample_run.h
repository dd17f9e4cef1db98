// The sampling engine behind `kz generate`'s two modes (Coder: generator.h, Proposer:
// proposer.h): for every unit (a task, or an API set) and every sample 0..n-1 that the run
// directory does not hold yet, ask the endpoint (one request per sample, n = 1), extract
// the code, write the code file and then the record's JSONL line (fsync'd), with a
// progress line, failures.jsonl and summary.json. `concurrency` threads call the endpoint
// at once; everything else runs under one lock. A rerun asks only for what is missing; a
// kill loses at most the requests in flight.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/endpoint.h"
#include "generate/run_log.h"

namespace kz::generate {

// One rendered prompt, to be sampled `samples` times.
struct Unit {
  std::string key;                 // the record's key value: a task id ("L1_19") or an API-set id
  std::string prompt, prompt_xxh;  // rendered text and its XXH3-128
  // Sequential refinement (refine_load.h): per sample, the whole conversation to send instead
  // of the prompt; an empty one is not asked. Empty: every sample asks the prompt.
  std::vector<std::vector<Message>> conversations{};
};

struct SampleRunOptions {
  std::string out_dir;
  std::string label = "kz generate";  // prefix of every stderr line
  RunFormat format;                   // the JSONL's name, record format and key field
  std::string model, prompt_name;
  std::string backend;    // written into each record ("" for the Proposer: not written)
  nlohmann::json summary_extra = nlohmann::json::object();  // merged into summary.json
  int samples = 1;        // per unit
  int concurrency = 4;    // requests in flight at most
  Api api = Api::kChat;
  Sampling sampling;      // n is forced to 1; seed, when set, is seed + sample
  double deadline_s = 600;
  bool proposer = false;  // extract `class Model` instead of `class ModelNew`
  size_t skipped = 0;     // samples of units that could not be prepared (reported, exit 1)
  int turn = 1;           // > 1: a refined turn; records carry "turn" and their "messages"
};

// The mode's own part: where a sample's code goes and what its record holds.
class SampleWriter {
 public:
  virtual ~SampleWriter() = default;
  // The code file of (unit, sample), relative to out_dir ("level_1_problem_19_sample_0_kernel.py").
  virtual std::string CodeFile(size_t unit, int sample) const = 0;
  // The record: CommonRecord(s) plus the mode's key fields. Called under the run's lock.
  virtual nlohmann::json Record(size_t unit, const SampleOutcome& s) const = 0;
};

// Exit codes: 0 every sample is there; 1 some requests failed or units were skipped (a
// rerun asks again); 2 the output directory cannot be written; 130 stopped by `cancel`.
int RunSamples(const SampleRunOptions& options, const std::vector<Unit>& units, const SampleWriter& writer,
               Endpoint* endpoint, std::atomic<bool>* cancel);

}  // namespace kz::generate
