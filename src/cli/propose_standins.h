// `kz propose standins --sets N --out DIR`: hand-written stand-ins for the Proposer
// (docs/curriculum.md, "Stand-in modules"): N API sets drawn as `kz propose sample` draws
// them, one KernelBench-format module per set (curriculum/standins.h), and a manifest that
// `kz propose validate --manifest` reads.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "curriculum/catalog.h"
#include "curriculum/sampler.h"

namespace kz::cli {

struct StandinArgs {
  size_t sets = 0;
  std::string out, stats;
  curriculum::SamplerOptions sampler;
};

// Adds the subcommand to `propose`; its options fill *args (which must outlive the app).
CLI::App* AddStandinsCommand(CLI::App* propose, StandinArgs* args);

// Writes DIR/sets.jsonl (kz.api_sets), DIR/modules/<set>.py and DIR/manifest.jsonl
// ({"path": "modules/<set>.py", "apis": [ids], "set"}); a summary line on stdout.
// 0, or 2 for bad options, statistics or an unwritable DIR.
int RunStandins(const StandinArgs& args, const curriculum::Catalog& catalog);

}  // namespace kz::cli
