#include "cli/propose_standins.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "curriculum/cooccur.h"
#include "curriculum/proposals.h"
#include "curriculum/standins.h"
#include "util/fs.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;
}  // namespace

CLI::App* AddStandinsCommand(CLI::App* propose, StandinArgs* a) {
  auto* s = propose->add_subcommand("standins", "Write stand-in modules for drawn API sets (and a validate manifest)");
  s->add_option("--sets", a->sets, "Number of API sets (modules)")->required()->check(CLI::PositiveNumber);
  s->add_option("--out", a->out, "Directory: sets.jsonl, modules/, manifest.jsonl")->required();
  s->add_option("-k", a->sampler.k, "APIs per set (default 3)");
  s->add_option("--seed", a->sampler.seed, "Sampler seed (default 1)");
  s->add_option("--stats", a->stats, "Co-occurrence statistics (kz propose mine); none: uniform");
  return s;
}

int RunStandins(const StandinArgs& a, const cur::Catalog& c) {
  std::string err;
  cur::Stats stats;
  if (!a.stats.empty() && !cur::LoadStats(a.stats, c, &stats, &err)) return UsageError("kz propose standins", err);
  cur::Sampler sampler;
  if (!sampler.Init(c.size(), a.stats.empty() ? nullptr : &stats, a.sampler, &err))
    return UsageError("kz propose standins", err);
  if (!util::MakeDirs(a.out + "/modules", &err)) return UsageError("kz propose standins", err);
  std::string sets, manifest;
  size_t written = 0;
  for (size_t j = 0; j < a.sets; ++j) {
    cur::ApiSetDraw d = sampler.Next({});
    json line = cur::ApiSetLine(c, j, d);
    std::string id = line["id"], text;
    sets += line.dump() + "\n";
    if (!cur::StandinModule(c, d.apis, &text, &err)) return UsageError("kz propose standins", id + ": " + err);
    std::string rel = "modules/" + id + ".py";
    if (!util::WriteFileAtomic(a.out + "/" + rel, text, &err)) return UsageError("kz propose standins", err);
    manifest += json{{"path", rel}, {"apis", line["ids"]}, {"set", id}}.dump() + "\n";
    ++written;
  }
  if (!util::WriteFileAtomic(a.out + "/sets.jsonl", sets, &err) ||
      !util::WriteFileAtomic(a.out + "/manifest.jsonl", manifest, &err))
    return UsageError("kz propose standins", err);
  std::cout << json{{"sets", a.sets},
                    {"modules", written},
                    {"k", a.sampler.k},
                    {"seed", a.sampler.seed},
                    {"manifest", a.out + "/manifest.jsonl"}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace kz::cli
