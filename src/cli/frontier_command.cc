// `kz frontier stats|list|export` (docs/curriculum.md "Frontier pool").
#include <cstdio>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/frontier_record.h"
#include "cli/frontier_verl.h"
#include "curriculum/frontier_pool.h"
#include "util/fs.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;

json EntryJson(const cur::PoolEntry& e) {
  return {{"id", e.id},
          {"name", e.module.name},
          {"hash", e.module.hash},
          {"apis", e.module.api_set},
          {"catalog_version", e.module.catalog_version},
          {"round", e.module.round},
          {"attempts", e.attempts},
          {"successes", e.successes},
          {"p_hat", e.p_hat ? json(*e.p_hat) : json(nullptr)},
          {"status", e.status}};
}

class FrontierImpl : public Command {
 public:
  explicit FrontierImpl(CLI::App* f) {
    f->add_option("--db", db_, "Frontier pool database (SQLite)")->required();
    f->require_subcommand(1);
    stats_ = f->add_subcommand("stats", "Counts by status, mean p̂");
    list_ = f->add_subcommand("list", "One JSON line per module");
    list_->add_option("--status", status_, "Only this status (untested, unsolved, frontier, mastered)");
    export_ = f->add_subcommand("export", "Write modules in KernelBench layout + frontier.jsonl");
    export_->add_option("--out", out_, "Directory")->required();
    export_->add_option("--status", status_, "Only this status");
    export_->add_option("--level", level_, "Level directory number (default 1)");
    export_->add_option("--format", format_, "kernelbench (default) or verl (verl.jsonl + train.parquet)")
        ->check(CLI::IsMember({"kernelbench", "verl"}));
    export_->add_option("--backend", backend_, "verl: the Coder prompt's backend, cuda (default) or triton")
        ->check(CLI::IsMember({"cuda", "triton"}));
    record_ = f->add_subcommand("record", "Add the Coder's attempts and successes on a module in a round");
    record_->add_option("--id", id_, "Module id (kz frontier list)")->required();
    record_->add_option("--round", round_, "Round")->required();
    record_->add_option("--attempts", attempts_, "Coder samples verified")->required();
    record_->add_option("--successes", successes_, "Of them correct")->required();
  }

  int Run() override {
    std::string err;
    if (record_->parsed()) return RecordAttempts(db_, id_, round_, attempts_, successes_);
    if (!util::PathExists(db_)) return Fail("no frontier pool at " + db_);
    auto pool = cur::FrontierPool::Open(db_, &err);
    std::vector<cur::PoolEntry> entries;
    if (!pool || !pool->List(&entries, &err)) return Fail(err);
    std::erase_if(entries, [&](const cur::PoolEntry& e) { return !status_.empty() && e.status != status_; });
    if (stats_->parsed()) return Stats(entries);
    if (list_->parsed()) {
      for (const auto& e : entries) std::cout << EntryJson(e).dump() << "\n";
      return 0;
    }
    if (format_ == "verl") return ExportVerl(entries, out_, backend_);
    return Export(entries);
  }

 private:
  static int Fail(const std::string& what) { return UsageError("kz frontier", what); }

  int Stats(const std::vector<cur::PoolEntry>& entries) {
    std::map<std::string, int> by_status;
    double sum = 0;
    int with_p = 0, attempts = 0;
    for (const auto& e : entries) {
      ++by_status[e.status];
      attempts += e.attempts;
      if (e.p_hat) sum += *e.p_hat, ++with_p;
    }
    std::cout << json{{"modules", entries.size()},
                      {"by_status", by_status},
                      {"attempts", attempts},
                      {"mean_p_hat", with_p ? json(sum / with_p) : json(nullptr)}}
                     .dump()
              << "\n";
    return 0;
  }

  int Export(const std::vector<cur::PoolEntry>& entries) {
    std::string err, dir = out_ + "/level" + std::to_string(level_), index;
    if (!util::MakeDirs(dir, &err)) return Fail(err);
    for (const auto& e : entries) {
      std::string file = dir + "/" + std::to_string(e.id) + "_" + e.module.name + ".py";
      if (!util::WriteFileAtomic(file, e.module.source, &err)) return Fail(err);
      json j = EntryJson(e);
      j["path"] = file;
      index += j.dump() + "\n";
    }
    if (!util::WriteFileAtomic(out_ + "/frontier.jsonl", index, &err)) return Fail(err);
    std::cerr << "kz frontier: " << entries.size() << " modules to " << dir << "\n";
    return 0;
  }

  CLI::App *stats_, *list_, *export_, *record_;
  std::string db_, status_, out_, format_ = "kernelbench", backend_ = "cuda";
  int level_ = 1, round_ = 0, attempts_ = 0, successes_ = 0;
  int64_t id_ = 0;
};

}  // namespace

std::unique_ptr<Command> AddFrontierCommand(CLI::App* frontier) { return std::make_unique<FrontierImpl>(frontier); }

}  // namespace kz::cli
