#include "cli/commands.h"

#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/frontier_record.h"
#include "cli/propose_coder.h"
#include "cli/propose_loop.h"
#include "cli/propose_standins.h"
#include "cli/propose_validate.h"
#include "curriculum/catalog.h"
#include "curriculum/cooccur.h"
#include "curriculum/frontier_pool.h"
#include "curriculum/plots.h"
#include "curriculum/proposals.h"
#include "curriculum/sampler.h"
#include "curriculum/scan.h"
#include "util/fs.h"
#include "verify/status.h"
#include "worker/worker_client.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;

int Usage(const std::string& what) { return UsageError("kz propose", what); }

// KernelBench's levels 1-3 under $KZ_KERNELBENCH (a user's checkout; never shipped).
std::vector<std::string> DefaultCorpus() {
  const char* kb = std::getenv("KZ_KERNELBENCH");
  if (!kb || !*kb) return {};
  return {std::string(kb) + "/level1", std::string(kb) + "/level2", std::string(kb) + "/level3"};
}

class ProposeImpl : public Command {
 public:
  ProposeImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    propose_ = app.add_subcommand("propose", "The curriculum: API catalog, co-occurrence, API sets");
    propose_->add_option("--catalog", catalog_path_, "API catalog (default data/api_catalog.json; $KZ_API_CATALOG)");
    auto* apis = propose_->add_subcommand("apis", "List the API catalog");
    apis->add_flag("--json", json_, "One JSON object per API");
    apis->add_option("--category", category_, "Only this category");
    auto* mine = propose_->add_subcommand("mine", "Mine API co-occurrence statistics from a module corpus");
    mine->add_option("--corpus", corpus_, "Corpus directory, repeatable (default $KZ_KERNELBENCH/level1..3)");
    mine->add_option("--out", out_, "Statistics file to write (kz.cooccur JSON)")->required();
    mine->add_option("--plots", plots_, "Directory for cooccurrence.svg and coverage.svg");
    mine->add_flag("--with-operators", with_ops_, "Count operators (@, +, *) as their torch APIs");
    auto* sample = propose_->add_subcommand("sample", "Draw API sets (JSONL on stdout)");
    sample->add_option("--sets", sets_, "Number of sets")->required()->check(CLI::PositiveNumber);
    sample->add_option("-k", options_.k, "APIs per set (default 3)");
    sample->add_option("--rho", options_.rho, "Share of sets from the frontier pool's failed sets (default 0)");
    sample->add_option("--seed", options_.seed, "Seed (default 1)");
    sample->add_option("--stats", stats_path_, "Co-occurrence statistics (kz propose mine); none: uniform");
    sample->add_option("--pool", pool_path_, "Frontier pool whose unsolved sets feed the rho share");
    sample->add_flag("--coverage", coverage_, "Print the coverage measurement instead of the sets");
    sample->add_option("--api-sets", api_sets_, "Write the sets as a kz.api_sets file (kz generate --proposer)");
    AddValidate();
    AddLoop();
    standins_ = AddStandinsCommand(propose_, &standin_args_);
    rewards_ =
        propose_->add_subcommand("rewards", "Frontier Reward of a run's validated proposals (RUN/rewards.jsonl)");
    rewards_->add_option("--proposals", v_.proposals, "The run directory (kz propose validate --proposals)")
        ->required();
    rewards_->add_option("--pool", v_.pool, "Frontier pool holding the Coder's attempts");
    rewards_->add_option("--invalid-penalty", penalty_, "Reward of an invalid proposal (default -1)");
    propose_->require_subcommand(0, 1);
    apis_ = apis, mine_ = mine, sample_ = sample;
    frontier_ = AddFrontierCommand(app.add_subcommand("frontier", "The frontier pool: stats, list, export"));
  }

  int Run() override {
    if (frontier_ && !propose_->parsed()) return frontier_->Run();
    std::string err;
    if (catalog_path_.empty()) catalog_path_ = cur::DefaultCatalogPath(argv0_);
    if (!catalog_.Load(catalog_path_, &err)) return Usage(err);
    if (apis_->parsed()) return Apis();
    if (mine_->parsed()) return Mine();
    if (validate_->parsed()) return RunValidate(v_, catalog_, argv0_);
    if (rewards_->parsed()) return ProposalRewards(v_.proposals, v_.pool, penalty_);
    if (sample_->parsed()) return Sample();
    if (standins_->parsed()) return RunStandins(standin_args_, catalog_);
    if (loop_.endpoint.empty() && loop_.replay.empty())
      return Usage(
          "a subcommand (apis, mine, sample, standins, validate, rewards), or the loop: --endpoint URL --model M "
          "--sets N --out DIR");
    if (!loop_.endpoint.empty() && !loop_.replay.empty()) return Usage("--endpoint or --replay, not both");
    if (run_out_.empty()) return Usage("the loop needs --out DIR");
    if (coder_.samples == 0 && (!coder_.endpoint.empty() || !coder_.replay.empty()))
      return Usage("--coder-endpoint (or --coder-replay) needs --coder-samples n");
    ValidateArgs v;
    v.proposals = run_out_, v.pool = loop_pool_, v.round = loop_round_, v.no_decontaminate = loop_no_decontaminate_;
    v.decontaminate = loop_decontaminate_;
    v.options.timeout_s = loop_timeout_;
    loop_.pool_for_sets = loop_pool_;
    if (loop_.seed) loop_.sampler.seed = static_cast<uint64_t>(*loop_.seed);
    int rc = RunProposeLoop(loop_, v, catalog_, argv0_);
    if (coder_.samples == 0 || (rc != 0 && rc != 1)) return rc;
    coder_.pool = loop_pool_, coder_.round = loop_round_;
    if (coder_.model.empty()) coder_.model = loop_.model;
    int coder_rc = RunCoderRound(coder_, run_out_, argv0_);
    return coder_rc != 0 ? coder_rc : rc;
  }

 private:
  // The loop's options live on `propose` itself: kz propose --endpoint URL --sets N --out DIR.
  void AddLoop() {
    auto* p = propose_;
    p->add_option("--endpoint", loop_.endpoint, "The loop: the model server's OpenAI base URL (.../v1)");
    p->add_option("--replay", loop_.replay, "The loop: answer from a transcript instead of a server");
    p->add_option("--record", loop_.record, "The loop: append every request and result to a transcript");
    p->add_option("--model", loop_.model, "The loop: the model name sent");
    p->add_option("--sets", loop_.sets, "The loop: API sets to draw");
    p->add_option("--out", run_out_,
                  "The loop: run directory (sets.jsonl, proposals.jsonl, modules/, validation.jsonl)");
    p->add_option("-n,--samples", loop_.samples, "The loop: modules asked per set (default 1)");
    p->add_option("--concurrency", loop_.concurrency, "The loop: requests in flight (default 4)");
    p->add_option("--temperature", loop_.temperature, "The loop: sampling temperature");
    p->add_option("--max-tokens", loop_.max_tokens, "The loop: max tokens per reply");
    p->add_option("--seed", loop_.seed, "The loop: sample s is sent seed S + s; also seeds the sampler");
    p->add_option("--api-key-env", loop_.api_key_env, "The loop: variable holding the API key");
    p->add_option("--prompt", loop_.prompt, "The loop: Proposer prompt template (default proposer_module.v1.txt)");
    p->add_option("-k", loop_.sampler.k, "The loop: APIs per set (default 3)");
    p->add_option("--rho", loop_.sampler.rho, "The loop: frontier share of sets (default 0)");
    p->add_option("--stats", loop_.stats, "The loop: co-occurrence statistics");
    p->add_option("--pool", loop_pool_, "The loop: frontier pool (its unsolved sets; valid modules added)");
    p->add_option("--round", loop_round_, "The loop: round recorded with the modules added to the pool");
    p->add_option("--decontaminate", loop_decontaminate_, "The loop: evaluation suite (default $KZ_KERNELBENCH)");
    p->add_flag("--no-decontaminate", loop_no_decontaminate_, "The loop: no decontamination");
    p->add_option("--timeout", loop_timeout_, "The loop: validation time per module, seconds (default 30)");
    AddCoderOptions(p, &coder_);
  }

  void AddValidate() {
    auto* v = propose_->add_subcommand("validate", "Three-stage validation of proposed modules (JSONL out)");
    v->add_option("files", v_.files, "Module files (all with the set of --apis)");
    v->add_option("--apis", v_.apis, "The API set of the files: ids or aliases, comma-separated");
    v->add_option("--manifest", v_.manifest, "JSONL of {\"path\", \"apis\", \"expect\"?}");
    v->add_option("--proposals", v_.proposals,
                  "A kz generate --proposer run directory: validates its modules "
                  "into RUN/validation.jsonl (resumable) and RUN/valid/level1");
    v->add_option("--decontaminate", v_.decontaminate,
                  "Evaluation suite directory, repeatable "
                  "(default $KZ_KERNELBENCH/level1..3)");
    v->add_flag("--no-decontaminate", v_.no_decontaminate, "No decontamination");
    v->add_option("--near-copy", v_.near_copy,
                  "Structural similarity (0-1) from which a module is a near copy "
                  "of an evaluation task (default 0.85)");
    v->add_option("--pool", v_.pool, "Frontier pool: refuse its modules as duplicates, add the valid ones");
    v->add_option("--round", v_.round, "Round recorded with modules added to the pool (default 0)");
    v->add_flag("--cuda", v_.cuda, "Run stages 2-3 on the GPU (default: the CPU)");
    v->add_option("--timeout", v_.options.timeout_s, "Per module, seconds (default 30)");
    v->add_option("--max-mem-mib", mem_mib_, "Per module address space beyond torch's, MiB (default 4096)")
        ->each([this](const std::string&) { v_.options.memory_bytes = mem_mib_ << 20; });
    v->add_option("--min-bytes", v_.options.min_total_bytes, "Size band: least footprint (default 4096)");
    v->add_option("--max-bytes", v_.options.max_total_bytes, "Size band: largest footprint (default 1 GiB)");
    v->add_option("--fp64-rel-l2", v_.options.fp64_rel_l2, "Largest fp32-vs-fp64 relative L2 error (default 1e-4)");
    validate_ = v;
  }

  int Apis() {
    for (const auto& a : catalog_.apis()) {
      if (!category_.empty() && a.category != category_) continue;
      if (json_) {
        std::cout << json{{"id", a.id},           {"kind", a.kind},         {"qualified", a.qualified},
                          {"aliases", a.aliases}, {"category", a.category}, {"inputs", a.inputs},
                          {"call", a.call}}
                         .dump()
                  << "\n";
      } else {
        std::string alias;
        for (size_t i = 1; i < a.aliases.size(); ++i) alias += (i > 1 ? ", " : "") + a.aliases[i];
        std::cout << a.id << "\t" << a.kind << "\t" << a.category << "\t" << a.qualified
                  << (alias.empty() ? "" : "\t(" + alias + ")") << "\n";
      }
    }
    if (!json_)
      std::cerr << catalog_.size() << " APIs, catalog version " << catalog_.version() << " (torch "
                << catalog_.torch_version() << ")\n";
    return 0;
  }

  int Mine() {
    if (corpus_.empty()) corpus_ = DefaultCorpus();
    if (corpus_.empty()) return Usage("mine: give --corpus DIR (or set KZ_KERNELBENCH to a KernelBench checkout)");
    cur::WorkerScanner scanner(worker::LocateWorker(argv0_));
    cur::Stats stats;
    std::string err;
    if (!cur::Mine(corpus_, catalog_, scanner, with_ops_, &stats, &err)) return Usage("mine: " + err);
    if (!cur::SaveStats(out_, stats, catalog_, &err)) return Usage(err);
    if (!plots_.empty() &&
        (!util::MakeDirs(plots_, &err) ||
         !util::WriteFileAtomic(plots_ + "/cooccurrence.svg", cur::HeatmapSvg(stats, catalog_), &err) ||
         !util::WriteFileAtomic(plots_ + "/coverage.svg", cur::CoverageHistogramSvg(stats, catalog_), &err)))
      return Usage(err);
    size_t skipped = 0, used = 0;
    for (const auto& [_, n] : stats.skipped) skipped += n;
    for (auto c : stats.count) used += c > 0;
    std::cerr << out_ << ": " << stats.modules << " modules of " << stats.files << " files, " << used << " of "
              << catalog_.size() << " catalog APIs used; skipped " << skipped;
    for (const auto& [why, n] : stats.skipped) std::cerr << " " << why << "=" << n;
    std::cerr << "; corpus " << stats.corpus_hash << "\n";
    return 0;
  }

  bool FrontierSets(std::vector<std::vector<size_t>>* out, std::string* err) {
    if (pool_path_.empty()) return true;
    auto pool = cur::FrontierPool::Open(pool_path_, err);
    std::vector<std::vector<std::string>> named;
    if (!pool || !pool->FailedSets(&named, err)) return false;
    for (const auto& names : named) {
      std::vector<size_t> set;
      if (!cur::ParseApiSet(catalog_, names, &set, err)) return *err = pool_path_ + ": " + *err, false;
      out->push_back(std::move(set));
    }
    return true;
  }

  int Sample() {
    std::string err;
    cur::Stats stats;
    if (!stats_path_.empty() && !cur::LoadStats(stats_path_, catalog_, &stats, &err)) return Usage(err);
    std::vector<std::vector<size_t>> frontier;
    if (!FrontierSets(&frontier, &err)) return Usage(err);
    cur::Sampler sampler;
    if (!sampler.Init(catalog_.size(), stats_path_.empty() ? nullptr : &stats, options_, &err)) return Usage(err);
    std::vector<size_t> first_seen(catalog_.size(), 0);
    size_t covered = 0, all_at = 0;
    std::string lines;
    for (size_t j = 1; j <= sets_; ++j) {
      cur::ApiSetDraw d = sampler.Next(frontier);
      for (size_t a : d.apis)
        if (!first_seen[a]) first_seen[a] = j, ++covered;
      if (covered == catalog_.size() && !all_at) all_at = j;
      if (!api_sets_.empty()) lines += cur::ApiSetLine(catalog_, j - 1, d).dump() + "\n";
      if (coverage_ || !api_sets_.empty()) continue;
      json ids = json::array();
      for (size_t a : d.apis) ids.push_back(catalog_.api(a).id);
      std::cout << json{{"set", j - 1},
                        {"apis", ids},
                        {"source", d.from_frontier ? "frontier" : "fresh"},
                        {"epoch", d.epoch}}
                       .dump()
                << "\n";
    }
    if (!api_sets_.empty() && !util::WriteFileAtomic(api_sets_, lines, &err)) return Usage(err);
    if (coverage_)
      std::cout << json{{"apis", catalog_.size()},
                        {"sets", sets_},
                        {"covered", covered},
                        {"all_covered_at", all_at ? json(all_at) : json(nullptr)},
                        {"bound", cur::Sampler::CoverageBound(catalog_.size(), options_.rho)},
                        {"k", options_.k},
                        {"rho", options_.rho},
                        {"seed", options_.seed}}
                       .dump()
                << "\n";
    return 0;
  }

  std::string argv0_, catalog_path_, category_, out_, plots_, stats_path_, pool_path_, api_sets_;
  std::vector<std::string> corpus_;
  bool json_ = false, with_ops_ = false, coverage_ = false;
  size_t sets_ = 0;
  cur::SamplerOptions options_;
  cur::Catalog catalog_;
  CLI::App *propose_, *apis_, *mine_, *sample_, *validate_, *rewards_, *standins_;
  StandinArgs standin_args_;
  CoderArgs coder_;
  LoopArgs loop_;
  std::string run_out_, loop_pool_;
  std::vector<std::string> loop_decontaminate_;
  bool loop_no_decontaminate_ = false;
  int loop_round_ = 0;
  double loop_timeout_ = 30;
  double penalty_ = -1.0;
  ValidateArgs v_;
  uint64_t mem_mib_ = 4096;
  std::unique_ptr<Command> frontier_;
};

}  // namespace

std::unique_ptr<Command> AddProposeCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<ProposeImpl>(app, argv0);
}

}  // namespace kz::cli
