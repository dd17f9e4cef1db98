#include "train/run_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <toml++/toml.h>

namespace kz::train {
namespace {

// The schema: table -> its keys. Anything else in the file is refused.
const std::map<std::string, std::set<std::string>>& Schema() {
  static const std::map<std::string, std::set<std::string>> schema = {
      {"run", {"seed", "rounds"}},
      {"model", {"path", "device", "dtype", "lr", "lora_r"}},
      {"sft", {"data", "epochs", "batch", "lr"}},
      {"coder", {"tasks", "tasks_per_step", "samples_per_task", "steps_per_round", "max_new_tokens", "temperature",
                 "clip_eps", "kl_coef", "backend", "lr", "budget_s"}},
      {"proposer", {"steps_per_round", "sets_per_step", "samples_per_set", "coder_samples", "k", "rho",
                    "max_new_tokens", "temperature", "lr", "invalid_penalty", "freeze_after_round", "model", "catalog",
                    "stats"}},
      {"rewards", {"alpha", "beta", "speedup_cap", "baseline"}},
      {"verify", {"cpu", "timeout", "jobs", "concurrency", "timing_ci"}},
      {"eval", {"tasks", "max_new_tokens", "turns", "baseline"}},
      {"multi_turn", {"turns", "stop_on_correct", "feedback_chars", "context_chars", "gamma", "eta", "prime_echo"}},
      {"retry", {"capacity", "max_retries", "per_step", "samples"}},
      {"mirror_pop", {"enabled", "seq_ratio_bound", "token_veto"}},
      {"rft", {"per_task", "epochs"}},
  };
  return schema;
}

class Reader {
 public:
  Reader(const toml::table& root, std::string* err) : root_(root), err_(err) {}

  bool CheckKeys() {
    for (const auto& [name, node] : root_) {
      std::string t(name.str());
      auto it = Schema().find(t);
      if (it == Schema().end()) return Fail("unknown table [" + t + "] (known: run, model, sft, coder, proposer, rewards, multi_turn, retry, mirror_pop, rft, verify, eval)");
      if (!node.is_table()) return Fail("[" + t + "] must be a table");
      for (const auto& [key, value] : *node.as_table())
        if (!it->second.count(std::string(key.str()))) return Fail("[" + t + "]: unknown key '" + std::string(key.str()) + "'");
    }
    return true;
  }

  template <class T>
  bool Int(const char* table, const char* key, T* out, int64_t lo, int64_t hi) {
    auto node = root_[table][key];
    if (!node) return true;
    auto v = node.value_exact<int64_t>();
    if (!v) return Fail(Where(table, key) + " must be an integer");
    if (*v < lo || *v > hi) return Fail(Where(table, key) + " = " + std::to_string(*v) + " is out of range [" +
                                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
    *out = static_cast<T>(*v);
    return true;
  }

  bool Double(const char* table, const char* key, double* out, double lo, double hi) {
    auto node = root_[table][key];
    if (!node) return true;
    auto v = node.value<double>();  // integers are accepted as numbers
    if (!v || !std::isfinite(*v)) return Fail(Where(table, key) + " must be a finite number");
    if (*v < lo || *v > hi) {
      std::ostringstream s;
      s << Where(table, key) << " = " << *v << " is out of range [" << lo << ", " << hi << "]";
      return Fail(s.str());
    }
    *out = *v;
    return true;
  }

  bool String(const char* table, const char* key, std::string* out, std::vector<std::string> allowed = {}) {
    auto node = root_[table][key];
    if (!node) return true;
    auto v = node.value_exact<std::string>();
    if (!v) return Fail(Where(table, key) + " must be a string");
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *v) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Fail(Where(table, key) + " = \"" + *v + "\" is not one of: " + list);
    }
    *out = *v;
    return true;
  }

  bool Bool(const char* table, const char* key, bool* out) {
    auto node = root_[table][key];
    if (!node) return true;
    auto v = node.value_exact<bool>();
    if (!v) return Fail(Where(table, key) + " must be true or false");
    *out = *v;
    return true;
  }

  bool Fail(const std::string& why) {
    *err_ = why;
    return false;
  }

 private:
  static std::string Where(const char* table, const char* key) { return std::string("[") + table + "] " + key; }
  const toml::table& root_;
  std::string* err_;
};

bool ReadProposer(Reader& r, RunConfig::Proposer* p) {
  return r.Int("proposer", "steps_per_round", &p->steps_per_round, 0, 100000) &&
         r.Int("proposer", "sets_per_step", &p->sets_per_step, 1, 4096) &&
         r.Int("proposer", "samples_per_set", &p->samples_per_set, 1, 256) &&
         r.Int("proposer", "coder_samples", &p->coder_samples, 1, 256) && r.Int("proposer", "k", &p->k, 1, 16) &&
         r.Double("proposer", "rho", &p->rho, 0, 0.99) &&
         r.Int("proposer", "max_new_tokens", &p->max_new_tokens, 1, 65536) &&
         r.Double("proposer", "temperature", &p->temperature, 0, 10) && r.Double("proposer", "lr", &p->lr, 0, 1) &&
         r.Double("proposer", "invalid_penalty", &p->invalid_penalty, -100, 0) &&
         r.Int("proposer", "freeze_after_round", &p->freeze_after_round, 0, 1000) &&
         r.String("proposer", "model", &p->model) && r.String("proposer", "catalog", &p->catalog) &&
         r.String("proposer", "stats", &p->stats);
}

// [multi_turn], [retry], [mirror_pop] and [eval] turns (issue 22).
bool ReadStabilisers(Reader& r, RunConfig* c) {
  auto& m = c->multi_turn;
  auto& b = c->mirror_pop.bounds;
  bool ok = r.Int("multi_turn", "turns", &m.turns, 1, 8) && r.Bool("multi_turn", "stop_on_correct", &m.stop_on_correct) &&
            r.Int("multi_turn", "feedback_chars", &m.feedback_chars, 100, 100000) &&
            r.Int("multi_turn", "context_chars", &m.context_chars, 1000, 1000000) &&
            r.Double("multi_turn", "gamma", &m.returns.gamma, 0, 1) && r.Double("multi_turn", "eta", &m.returns.eta, 0, 100) &&
            r.Bool("multi_turn", "prime_echo", &m.returns.prime_echo) &&
            r.Int("retry", "capacity", &c->retry.capacity, 0, 100000) &&
            r.Int("retry", "max_retries", &c->retry.max_retries, 1, 100) &&
            r.Int("retry", "per_step", &c->retry.per_step, 1, 4096) && r.Int("retry", "samples", &c->retry.samples, 0, 256) &&
            r.Bool("mirror_pop", "enabled", &c->mirror_pop.enabled) &&
            r.Double("mirror_pop", "seq_ratio_bound", &b.seq_ratio_bound, 1, 1e6) &&
            r.Double("mirror_pop", "token_veto", &b.token_veto, 1, 1e9) && r.Int("eval", "turns", &c->eval_turns, 1, 8) &&
            r.Bool("eval", "baseline", &c->eval_baseline) &&
            r.Int("rft", "per_task", &c->rft_per_task, 0, 10000) && r.Int("rft", "epochs", &c->rft_epochs, 1, 100);
  if (!ok) return false;
  m.returns.baseline = c->rewards.baseline;
  if (std::string why = rewards::Validate(m.returns); !why.empty()) return r.Fail("[multi_turn]: " + why);
  if (std::string why = rewards::Validate(b); !why.empty()) return r.Fail("[mirror_pop]: " + why);
  return true;
}

bool ReadAll(Reader& r, RunConfig* c) {
  int64_t seed = static_cast<int64_t>(c->seed);
  std::string baseline = "group";
  bool ok = r.CheckKeys() && r.Int("run", "seed", &seed, 0, INT64_MAX) && r.Int("run", "rounds", &c->rounds, 1, 1000) &&
            r.String("model", "path", &c->model) && r.String("model", "device", &c->device) &&
            r.String("model", "dtype", &c->dtype, {"float32", "bfloat16", "float16"}) &&
            r.Double("model", "lr", &c->lr, 0, 1) && r.Int("model", "lora_r", &c->lora_r, 0, 1024) &&
            r.String("sft", "data", &c->sft_data) && r.Int("sft", "epochs", &c->sft_epochs, 1, 100) &&
            r.Int("sft", "batch", &c->sft_batch, 1, 4096) && r.Double("sft", "lr", &c->sft_lr, 0, 1) && r.String("coder", "tasks", &c->coder_tasks) &&
            r.Int("coder", "tasks_per_step", &c->tasks_per_step, 1, 4096) &&
            r.Int("coder", "samples_per_task", &c->samples_per_task, 1, 256) &&
            r.Int("coder", "steps_per_round", &c->steps_per_round, 0, 100000) &&
            r.Int("coder", "max_new_tokens", &c->max_new_tokens, 1, 65536) &&
            r.Double("coder", "temperature", &c->temperature, 0, 10) && r.Double("coder", "clip_eps", &c->clip_eps, 0, 1) &&
            r.Double("coder", "kl_coef", &c->kl_coef, 0, 100) && r.Double("coder", "lr", &c->coder_lr, 0, 1) &&
            r.String("coder", "backend", &c->backend, {"triton", "cuda"}) &&
            r.Double("coder", "budget_s", &c->coder_budget_s, 0, 1e9) &&
            r.Double("rewards", "alpha", &c->rewards.alpha, 0, 1e9) && r.Double("rewards", "beta", &c->rewards.beta, 0, 1e9) &&
            r.Double("rewards", "speedup_cap", &c->rewards.speedup_cap, 1, 1e9) &&
            r.String("rewards", "baseline", &baseline, {"group", "loo"}) && r.Bool("verify", "cpu", &c->verify_cpu) &&
            r.Double("verify", "timeout", &c->verify_timeout_s, 1, 86400) && r.Int("verify", "jobs", &c->verify_jobs, 1, 256) &&
            r.Int("verify", "concurrency", &c->verify_concurrency, 1, 64) &&
            r.Double("verify", "timing_ci", &c->verify_timing_ci, 0, 0.5) &&
            r.String("eval", "tasks", &c->eval_tasks) && r.Int("eval", "max_new_tokens", &c->eval_max_new_tokens, 1, 65536);
  if (!ok || !ReadProposer(r, &c->proposer)) return false;
  c->seed = static_cast<uint64_t>(seed);
  c->rewards.baseline = baseline == "loo" ? rewards::Baseline::kLeaveOneOut : rewards::Baseline::kGroupNormalised;
  if (!ReadStabilisers(r, c)) return false;
  if (c->model.empty()) return r.Fail("[model] path is required");
  if (std::string why = rewards::Validate(c->rewards); !why.empty()) return r.Fail("[rewards]: " + why);
  if (c->steps_per_round > 0 && c->coder_tasks.empty() && c->proposer.steps_per_round == 0)
    return r.Fail("[coder] tasks is required when steps_per_round > 0 (or a [proposer] phase that makes tasks)");
  if (c->device != "auto" && c->device != "cpu" && c->device != "cuda" && c->device.rfind("cuda:", 0) != 0)
    return r.Fail("[model] device = \"" + c->device + "\" is not auto, cpu, cuda or cuda:N");
  return true;
}

}  // namespace

bool ParseRunConfig(const std::string& toml_text, RunConfig* out, std::string* err) {
  toml::table root;
  try {
    root = toml::parse(toml_text);
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << "not valid TOML: " << e.description() << " (line " << e.source().begin.line << ", column "
      << e.source().begin.column << ")";
    *err = s.str();
    return false;
  }
  RunConfig c;
  Reader r(root, err);
  if (!ReadAll(r, &c)) return false;
  *out = std::move(c);
  return true;
}

}  // namespace kz::train
