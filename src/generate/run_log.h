// A generation run's files (docs/generate.md):
//   <out>/generations.jsonl  one record per finished sample (format "kz.generation/1"),
//                            appended and fsync'd line by line; the file `kz bench` reads
//   <out>/level_<L>_problem_<P>_sample_<S>_kernel.py  KernelBench's layout (empty when
//                            the sample has a reason), written before its JSONL line
//   <out>/failures.jsonl     requests that failed after their retries (retried on a rerun)
//   <out>/summary.json       totals, rewritten at the end of each invocation
#pragma once
#include <map>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "scoring/suite.h"
#include "generate/endpoint.h"
#include "generate/extract.h"

namespace kz::generate {

// A run's JSONL: its file name, its records' format and the field that names the unit.
struct RunFormat {
  std::string jsonl = "generations.jsonl";
  std::string format = "kz.generation/1";
  std::string key_field = "task";
};

// What a sample's record is made of.
struct SampleOutcome {
  int sample = 0;
  std::string backend, model, prompt_name, prompt_xxh;
  const Choice* choice = nullptr;
  const Usage* usage = nullptr;
  double latency_s = 0;
  int attempts = 0;
  Extraction extraction;
};

// The fields every record has (sample, code, tokens, finish reason, latency, attempts,
// model, prompt, prompt hash, reason, and the reply when there is no code), without
// format and key: the mode adds those.
nlohmann::json CommonRecord(const SampleOutcome& s);

// A Coder record (format kz.generation/1): CommonRecord + task, level, problem.
nlohmann::json SampleRecord(const scoring::SuiteTask& task, const SampleOutcome& s);

// KernelBench's file name of a sample.
std::string KernelFileName(int level, int problem, int sample);

struct LoadedRun {
  std::map<std::pair<std::string, int>, nlohmann::json> records;  // by (key, sample); first wins
  int ignored_lines = 0;  // torn (a kill) or not ours
};

// Reads a run's JSONL: records of `format` with a string key field and an integer sample;
// a missing file is an empty run.
LoadedRun LoadRun(const std::string& jsonl_path, const RunFormat& format = {});

// Rewrites the JSONL with `records` in (level, problem, key, sample) order, atomically: the
// finished file is the same bytes whatever order the replies came in.
bool RewriteSorted(const std::string& jsonl_path, const LoadedRun& run, std::string* err);

// Totals over a run's records: samples, reasons, tokens, mean latency.
nlohmann::json RunTotals(const LoadedRun& run);

}  // namespace kz::generate
