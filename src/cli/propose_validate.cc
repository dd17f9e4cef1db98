#include "cli/propose_validate.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "curriculum/frontier_pool.h"
#include "curriculum/validator.h"
#include "util/fs.h"
#include "verify/device.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(part);
  return out;
}

bool ReadManifest(const ValidateArgs& a, const cur::Catalog& c, std::vector<cur::Proposal>* out,
                  std::vector<std::string>* expect, std::string* err) {
  std::string text;
  if (!util::ReadFile(a.manifest, &text, err)) return false;
  auto dir = std::filesystem::path(util::AbsolutePath(a.manifest)).parent_path();
  std::stringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("path") || !j.contains("apis") || !j["apis"].is_array())
      return *err = a.manifest + ":" + std::to_string(line_no) + ": expected {\"path\", \"apis\": [...]}", false;
    cur::Proposal p{(dir / j["path"].get<std::string>()).string(), {}};
    std::vector<std::string> names;
    for (const auto& n : j["apis"]) names.push_back(n.is_string() ? n.get<std::string>() : n.dump());
    if (!cur::ParseApiSet(c, names, &p.apis, err))
      return *err = a.manifest + ":" + std::to_string(line_no) + ": " + *err, false;
    out->push_back(std::move(p));
    expect->push_back(j.value("expect", ""));
  }
  return true;
}

bool Known(const ValidateArgs& a, cur::Scanner& scanner, cur::KnownHashes* known, std::string* err) {
  std::vector<std::string> eval = a.decontaminate;
  if (eval.empty() && !a.no_decontaminate)
    if (const char* kb = std::getenv("KZ_KERNELBENCH"); kb && *kb)
      for (const char* l : {"/level1", "/level2", "/level3"}) eval.push_back(std::string(kb) + l);
  known->near_copy = a.near_copy;
  if (!eval.empty() && !cur::EvalHashes(eval, scanner, known, err)) return false;
  if (a.pool.empty()) return true;
  auto pool = cur::FrontierPool::Open(a.pool, err);
  return pool && cur::AddPoolHashes(*pool, known, err);
}

}  // namespace

bool AddToPool(const ValidateArgs& a, const cur::Catalog& c, const std::vector<cur::Outcome>& outcomes,
               std::string* err) {
  if (a.pool.empty()) return true;
  auto pool = cur::FrontierPool::Open(a.pool, err);
  if (!pool) return false;
  for (const auto& o : outcomes) {
    if (o.refusal) continue;
    cur::PoolModule m{o.canonical_hash, std::filesystem::path(o.path).stem().string(), {}, c.version(), "", a.round};
    for (size_t i : o.apis) m.api_set.push_back(c.api(i).id);
    int64_t id;
    bool inserted;
    if (!util::ReadFile(o.path, &m.source, err) || !pool->Add(m, &id, &inserted, err)) return false;
  }
  return true;
}

namespace {
// One JSON line per outcome (with `expect` and `matches` where labelled), a summary on
// stderr; the exit code of RunValidate.
int Report(const std::vector<cur::Outcome>& outcomes, const std::vector<std::string>& expect, const cur::Catalog& c,
           double wall) {
  size_t valid = 0, matched = 0, with_expect = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    json j = cur::OutcomeJson(outcomes[i], c);
    valid += j["valid"].get<bool>();
    if (!expect[i].empty()) {
      std::string got =
          j["valid"].get<bool>() ? "valid" : j["stage"].get<std::string>() + "." + j["rule"].get<std::string>();
      j["expect"] = expect[i];
      j["matches"] = got == expect[i];
      ++with_expect;
      matched += got == expect[i];
    }
    std::cout << j.dump() << "\n";
  }
  std::cerr << "kz propose validate: " << valid << " of " << outcomes.size() << " valid";
  if (with_expect) std::cerr << "; " << matched << " of " << with_expect << " as labelled";
  std::cerr << "; " << wall << " s (" << (wall > 0 ? 60.0 * outcomes.size() / wall : 0) << " modules/min)\n";
  if (with_expect) return matched == with_expect ? 0 : 1;
  return valid == outcomes.size() ? 0 : 1;
}
}  // namespace

int Bad(const std::string& what) {
  std::cerr << "kz propose validate: " << what << "\n";
  return verify::kExitUsage;
}

int RunValidate(const ValidateArgs& a, const cur::Catalog& c, const std::string& argv0) {
  std::vector<cur::Proposal> proposals;
  std::vector<std::string> expect;
  std::string err;
  if (a.cuda && verify::DetectGpus().empty()) return Bad("--cuda: no GPU on this host");
  if (!a.proposals.empty()) {
    cur::WorkerScanner scanner(worker::LocateWorker(argv0));
    cur::KnownHashes known;
    if (!Known(a, scanner, &known, &err)) return Bad(err);
    return RunValidateProposals(a, c, std::move(known), argv0);
  }
  if (!a.manifest.empty()) {
    if (!ReadManifest(a, c, &proposals, &expect, &err)) return Bad(err);
  } else {
    std::vector<size_t> set;
    if (a.files.empty()) return Bad("give module files and --apis, or --manifest");
    if (!cur::ParseApiSet(c, Split(a.apis), &set, &err)) return Bad(err);
    for (const auto& f : a.files) proposals.push_back({util::AbsolutePath(f), set}), expect.push_back("");
  }
  cur::WorkerScanner scanner(worker::LocateWorker(argv0));
  cur::WorkerRunFacts runner(worker::LocateWorker(argv0), a.cuda);
  cur::KnownHashes known;
  if (!Known(a, scanner, &known, &err)) return Bad(err);
  std::vector<cur::Outcome> outcomes;
  auto start = std::chrono::steady_clock::now();
  if (!cur::ValidateAll(proposals, c, scanner, runner, a.options, &known, &outcomes, &err)) {
    std::cerr << "kz propose validate: " << err << "\n";
    return verify::kExitInternal;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!AddToPool(a, c, outcomes, &err)) return Bad(err);
  return Report(outcomes, expect, c, wall);
}

}  // namespace kz::cli
