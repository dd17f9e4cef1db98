#include "cli/propose_coder.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/exec_sibling.h"
#include "curriculum/coder_tally.h"
#include "curriculum/frontier_pool.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "util/subprocess.h"
#include "verify/device.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace cur = kz::curriculum;
using Key = std::pair<std::string, int>;  // (set, sample)

int Fail(int code, const std::string& what) {
  std::cerr << "kz propose (coder): " << what << "\n";
  return code;
}

std::vector<json> ReadJsonl(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

// The last record of each (set, sample) of RUN/validation.jsonl, in first-seen order.
std::vector<json> Validations(const std::string& run) {
  std::vector<json> out;
  std::map<Key, size_t> at;
  for (auto& j : ReadJsonl(run + "/validation.jsonl")) {
    Key k{j.value("set", ""), j.value("sample", 0)};
    if (auto it = at.find(k); it != at.end())
      out[it->second] = std::move(j);
    else
      at[k] = out.size(), out.push_back(std::move(j));
  }
  return out;
}

// RUN/valid/level1/<n>_<set>_sample_<S>.py -> task "L1_<n>".
std::map<Key, std::string> ValidTasks(const std::string& run) {
  std::map<Key, std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(run + "/valid/level1", ec)) {
    std::string stem = e.path().stem().string();
    size_t us = stem.find('_'), smp = stem.rfind("_sample_");
    if (e.path().extension() != ".py" || us == std::string::npos || smp == std::string::npos || smp <= us) continue;
    out[{stem.substr(us + 1, smp - us - 1), std::atoi(stem.c_str() + smp + 8)}] = "L1_" + stem.substr(0, us);
  }
  return out;
}

std::vector<std::string> BenchArgv(const CoderArgs& a, const std::string& run, const std::string& argv0) {
  std::vector<std::string> v = {
      SiblingPath(argv0.c_str(), "kz"), "bench", "--suite", run + "/valid", "--out", run + "/coder_bench"};
  if (!a.server.empty())
    v.insert(v.end(), {"--server", a.server});
  else if (verify::DetectGpus().empty())
    v.push_back("--cpu");
  if (a.verify_timeout_s) v.insert(v.end(), {"--timeout", std::to_string(*a.verify_timeout_s)});
  v.insert(v.end(), {"--generate", run + "/coder", "--", "--model", a.model, "-n", std::to_string(a.samples), "--seed",
                     "0", "--concurrency", std::to_string(a.concurrency)});
  if (!a.replay.empty())
    v.insert(v.end(), {"--replay", a.replay});
  else
    v.insert(v.end(), {"--endpoint", a.endpoint, "--api-key-env", a.api_key_env});
  if (!a.record.empty()) v.insert(v.end(), {"--record", a.record});
  if (!a.backend.empty()) v.insert(v.end(), {"--backend", a.backend});
  if (a.max_tokens) v.insert(v.end(), {"--max-tokens", std::to_string(*a.max_tokens)});
  if (a.temperature) v.insert(v.end(), {"--temperature", std::to_string(*a.temperature)});
  return v;
}

// Adds each complete tally to the pool once: RUN/coder_recorded.jsonl names what is in.
bool RecordInPool(const CoderArgs& a, const std::string& run, const std::vector<json>& valid,
                  const std::map<std::string, cur::CoderTally>& tallies, const std::map<Key, std::string>& tasks,
                  size_t* recorded, std::string* err) {
  if (a.pool.empty()) return true;
  std::string marker = run + "/coder_recorded.jsonl";
  std::set<std::string> done;
  for (const auto& j : ReadJsonl(marker)) done.insert(j.value("hash", ""));
  auto pool = cur::FrontierPool::Open(a.pool, err);
  std::vector<cur::PoolEntry> entries;
  if (!pool || !pool->List(&entries, err)) return false;
  std::map<std::string, int64_t> ids;
  for (const auto& e : entries) ids[e.module.hash] = e.id;
  scoring::VerdictLog log;
  if (!log.Open(marker, err)) return false;
  for (const auto& v : valid) {
    std::string hash = v.value("canonical_hash", "");
    auto task = tasks.find({v.value("set", ""), v.value("sample", 0)});
    if (task == tasks.end() || done.count(hash) || !ids.count(hash)) continue;
    auto t = tallies.find(task->second);
    if (t == tallies.end() || t->second.attempts < a.samples) continue;
    if (!log.Append(
            {{"hash", hash}, {"round", a.round}, {"attempts", t->second.attempts}, {"successes", t->second.successes}},
            err) ||
        !pool->RecordAttempts(ids[hash], a.round, t->second.attempts, t->second.successes, err))
      return false;
    done.insert(hash), ++*recorded;
  }
  return true;
}

json RewardLine(const CoderArgs& a, const json& v, const std::map<std::string, cur::CoderTally>& tallies,
                const std::map<Key, std::string>& tasks) {
  bool valid = v.value("valid", false);
  json out = {{"set", v.value("set", "")}, {"sample", v.value("sample", 0)}, {"valid", valid}};
  const cur::CoderTally* t = nullptr;
  if (auto task = tasks.find({out["set"], out["sample"]}); valid && task != tasks.end()) {
    out["task"] = task->second;
    if (auto it = tallies.find(task->second); it != tallies.end()) t = &it->second;
  }
  std::string why;
  auto r = cur::ProposalReward(valid, t, a.samples, a.reward, &why);
  out["reward"] = r ? json(*r) : json(nullptr);
  out["attempts"] = t ? t->attempts : 0, out["successes"] = t ? t->successes : 0;
  out["p_hat"] = t && t->attempts ? json(double(t->successes) / t->attempts) : json(nullptr);
  out["reason"] = !valid ? v.value("reason", v.value("stage", "") + "." + v.value("rule", ""))
                  : t    ? "coder: " + cur::TallyReason(*t) + (r ? "" : "; " + why)
                         : "coder: " + why;
  return out;
}
}  // namespace

void AddCoderOptions(CLI::App* p, CoderArgs* a) {
  p->add_option("--coder-samples", a->samples, "The loop: Coder kernels per valid module; computes the Frontier Reward")
      ->check(CLI::Range(1, 1000));
  p->add_option("--coder-endpoint", a->endpoint, "The loop: the Coder's OpenAI base URL (.../v1)");
  p->add_option("--coder-replay", a->replay, "The loop: the Coder answers from this transcript");
  p->add_option("--coder-record", a->record, "The loop: append the Coder's requests and results to a transcript");
  p->add_option("--coder-model", a->model, "The loop: the Coder's model name (default: --model)");
  p->add_option("--coder-backend", a->backend, "The loop: cuda or triton (kz generate --backend)");
  p->add_option("--coder-max-tokens", a->max_tokens, "The loop: max tokens per Coder reply");
  p->add_option("--coder-temperature", a->temperature, "The loop: the Coder's sampling temperature");
  p->add_option("--coder-server", a->server, "The loop: verify through this kz serve (default: in process)");
  p->add_option("--coder-timeout", a->verify_timeout_s, "The loop: verification time per kernel, seconds");
  p->add_option("--invalid-penalty", a->reward.invalid_penalty, "The loop: reward of an invalid proposal (default -1)");
}

int RunCoderRound(const CoderArgs& a, const std::string& run, const std::string& argv0) {
  if (a.samples < 1) return Fail(verify::kExitUsage, "--coder-samples must be at least 1");
  if (a.endpoint.empty() == a.replay.empty())
    return Fail(verify::kExitUsage, "give --coder-endpoint or --coder-replay");
  std::vector<json> records = Validations(run), valid;
  for (const auto& v : records)
    if (v.value("valid", false)) valid.push_back(v);
  auto tasks = ValidTasks(run);
  int rc = 0;
  if (!valid.empty()) {
    util::ProcessSpec spec;
    spec.argv = BenchArgv(a, run, argv0), spec.wall_limit_s = a.deadline_s, spec.tail_bytes = 4096;
    util::ProcessResult r = util::RunProcess(spec);
    if (r.end != util::ProcessEnd::kExited || (r.exit_code != 0 && r.exit_code != 1))
      return Fail(4, "kz bench --generate ended " + std::string(util::ProcessEndName(r.end)) + " (exit " +
                         std::to_string(r.exit_code) + "):\n" + r.stderr_tail);
    rc = r.exit_code;
  }
  std::vector<json> bad;
  std::string text, err, lines;
  json report =
      util::ReadFile(run + "/coder_bench/report.json", &text, &err) ? json::parse(text, nullptr, false) : json();
  if (report.is_object() && report.contains("bad_inputs") && report["bad_inputs"].is_array())
    bad = report["bad_inputs"].get<std::vector<json>>();
  auto tallies = cur::TallyCoder(ReadJsonl(run + "/coder_bench/verdicts.jsonl"), bad);
  size_t recorded = 0, rewarded = 0, complete = 0;
  if (!RecordInPool(a, run, valid, tallies, tasks, &recorded, &err)) return Fail(verify::kExitUsage, err);
  double sum = 0;
  for (const auto& v : records) {
    json l = RewardLine(a, v, tallies, tasks);
    if (!l["reward"].is_null()) ++rewarded, sum += l["reward"].get<double>(), complete += l["valid"].get<bool>();
    lines += l.dump() + "\n";
  }
  if (!util::WriteFileAtomic(run + "/rewards.jsonl", lines, &err)) return Fail(verify::kExitUsage, err);
  std::cout << json{{"coder",
                     {{"valid_modules", valid.size()},
                      {"with_all_samples", complete},
                      {"samples", a.samples},
                      {"recorded_in_pool", recorded}}},
                    {"rewards", rewarded},
                    {"proposals", records.size()},
                    {"mean_reward", rewarded ? json(sum / rewarded) : json(nullptr)}}
                   .dump()
            << "\n";
  return complete == valid.size() ? rc : 1;
}

}  // namespace kz::cli
