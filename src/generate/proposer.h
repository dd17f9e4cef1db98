// `kz generate --proposer`: the Proposer mode (docs/generate.md, "Proposer mode"). Each
// API set of a JSONL file is rendered into the Proposer prompt (prompts/
// proposer_module.v1.txt: {{api_set}}, {{set_id}}) and sampled n times; the code of a
// reply is its last complete python block defining `class Model`. Output, resumable like
// the Coder's (sample_run.h):
//   <out>/proposals.jsonl                 one record per sample, format "kz.proposal/1"
//   <out>/modules/<set>_sample_<S>.py     the proposed module (empty when it has a reason)
// A library for `kz propose` (src/curriculum, issue 16): it validates the modules.
#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "generate/endpoint.h"
#include "generate/prompt.h"
#include "generate/run_log.h"

namespace kz::generate {

// One line of an API-set file: {"id": "conv_relu", "apis": ["torch.nn.Conv2d", "torch.relu"]}.
// id: 1-100 of [A-Za-z0-9._-], not starting with '.', unique in the file (it names files);
// apis: a non-empty array of non-empty strings. Other fields are ignored.
struct ApiSet {
  std::string id;
  std::vector<std::string> apis;
};

// Reads an API-set JSONL file. Each bad line (not JSON, a bad id or apis, a repeated id)
// is described in *bad ("sets.jsonl:3: ...") and skipped; blank lines are ignored. False
// with *err only when the file cannot be read or is not UTF-8.
bool ReadApiSets(const std::string& path, std::vector<ApiSet>* sets, std::vector<std::string>* bad, std::string* err);

// Parses one line; false with *err saying what is wrong.
bool ParseApiSet(const std::string& line, ApiSet* out, std::string* err);

struct ProposeOptions {
  std::string out_dir, model;
  int samples = 1;       // per API set
  int concurrency = 4;   // requests in flight at most
  Api api = Api::kChat;
  Sampling sampling;     // n is forced to 1; seed, when set, is seed + sample
  double deadline_s = 600;
  size_t skipped = 0;    // samples of sets that were not read (bad lines): reported, exit 1
};

// proposals.jsonl's name, format ("kz.proposal/1") and key field ("set"), for LoadRun.
RunFormat ProposalFormat();
// "modules/<set>_sample_<S>.py"
std::string ModuleFileName(const std::string& set_id, int sample);

// Exit codes as RunSamples (sample_run.h): 0 all there, 1 failures or skipped sets, 2 usage
// (a template placeholder without a value, an unwritable --out), 130 cancelled.
int RunPropose(const ProposeOptions& options, const std::vector<ApiSet>& sets, const PromptTemplate& prompt,
               Endpoint* endpoint, std::atomic<bool>* cancel);

}  // namespace kz::generate
