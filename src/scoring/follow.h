// `kz bench --generate RUN -- GENERATE-ARGS` (docs/bench.md, "Generating and verifying at
// once"): generation and verification overlap. The generator (`kz generate`, a child
// process: kz stays libc-only) writes RUN/generations.jsonl; while it runs, each round
// verifies the samples that appeared since the last one (RunBench over the file as it
// grows: what verdicts.jsonl holds is never verified again); once it has exited, a last
// round writes the final report. A kill of either loses nothing finished: both files
// are appended and fsync'd line by line, and the same command resumes both.
#pragma once
#include <string>
#include <vector>

#include "scoring/runner.h"

namespace kz::scoring {

struct FollowOptions {
  std::vector<std::string> generator_argv;  // the whole command line of the generator
  std::string jsonl;                         // the file it writes (RUN/generations.jsonl)
  double poll_s = 0.5;                       // how often the file is looked at
};

// Exit code: RunBench's when its last round fails; else the generator's when it is not 0
// (1: some requests failed, 130: interrupted; rerun to complete); else 0. The report of
// what was verified is written in every case.
int RunBenchFollowing(BenchOptions options, const FollowOptions& follow, const worker::WorkerConfig& worker);

}  // namespace kz::scoring
