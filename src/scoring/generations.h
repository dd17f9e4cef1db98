// A run's generations: KernelBench's directory layout
// (`level_<L>_problem_<P>_sample_<S>_kernel.py`) or JSONL, one object a line:
// {"task": "L1_19" | {"level": 1, "problem": 19}, "sample": 0, "code": "...",
//  "output_tokens": 812?, "backend": "cuda" | "triton"?}.
// Bad inputs never abort: each is reported (BadInput) and the rest is read.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/suite.h"

namespace kz::scoring {

struct Generation {
  std::string task_id;
  int level = 0;
  int sample = 0;
  std::string code;
  std::optional<double> output_tokens;
  std::string backend;  // "cuda", "triton", or "" (detected by the verifier)
  std::string origin;   // "file.py" or "gens.jsonl:12"
};

// Kinds: unknown_task, duplicate_sample, empty_code, not_utf8, malformed_line,
// unrecognized_file, unreadable_file. `scored` bad inputs (empty code, not UTF-8) belong
// to a real (task, sample) and count as incorrect samples in the metrics.
struct BadInput {
  std::string origin;
  std::string kind;
  std::string message;
  std::string task_id;          // "" when unknown
  int level = 0;
  std::optional<int> sample;
  bool scored = false;
  std::optional<double> output_tokens;
};

struct Generations {
  std::vector<Generation> items;  // in input order, one per (task, sample)
  std::vector<BadInput> bad;
};

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points > U+10FFFF).
bool IsValidUtf8(const std::string& s);
// `s` with every ill-formed byte replaced by U+FFFD.
std::string ReplaceInvalidUtf8(const std::string& s);

nlohmann::json BadInputJson(const BadInput& b);

// Reads a directory (KernelBench layout) or a JSONL file. False (with *err) only when
// `path` cannot be read at all.
bool ReadGenerations(const std::string& path, const Suite& suite, Generations* out, std::string* err);

}  // namespace kz::scoring
