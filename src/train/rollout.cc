#include "train/rollout.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "scoring/verdict_log.h"
#include "generate/extract.h"
#include "generate/prompt.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/log.h"

namespace kz::train {
namespace {
using nlohmann::json;

json GenerationToJson(const GenerateResult& g) {
  json samples = json::array();
  for (const auto& s : g.samples)
    samples.push_back({{"prompt_index", s.prompt_index}, {"text", s.text}, {"finish_reason", s.finish_reason},
                       {"token_ids", s.token_ids}, {"logprobs", s.logprobs}});
  return {{"format", "kz.generation/1"}, {"samples", samples}, {"prompt_ids", g.prompt_ids}};
}

bool GenerationFromJson(const json& j, GenerateResult* g) {
  if (!j.is_object() || j.value("format", "") != "kz.generation/1") return false;
  try {
    g->prompt_ids = j.at("prompt_ids").get<std::vector<std::vector<int>>>();
    for (const auto& s : j.at("samples"))
      g->samples.push_back({s.at("prompt_index").get<int>(), s.at("text").get<std::string>(),
                            s.at("finish_reason").get<std::string>(), s.at("token_ids").get<std::vector<int>>(),
                            s.at("logprobs").get<std::vector<double>>()});
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

// The Coder's samples for `tasks`: GenerateOnce in unit_dir/generation.json.
bool Generate(TrainerBackend& backend, const std::vector<RolloutTask>& tasks, const RolloutOptions& o,
              const std::string& unit_dir, GenerateResult* g, std::string* err, TrainerError* terr) {
  GenerateRequest req;
  for (const auto& t : tasks) {
    std::string prompt;
    if (!RenderCoderPrompt(t, o, &prompt, err)) return false;
    req.prompts.push_back(prompt);
  }
  req.n = o.n;
  req.temperature = o.temperature;
  req.max_new_tokens = o.max_new_tokens;
  req.seed = o.seed;
  req.chat = true;
  return GenerateOnce(backend, req, unit_dir + "/generation.json", g, err, terr);
}

std::optional<double> Speedup(const json& verdict) {
  const json* t = verdict.contains("stages") && verdict["stages"].contains("timing") ? &verdict["stages"]["timing"] : nullptr;
  if (!t || !t->contains("speedup") || !(*t)["speedup"].is_number()) return std::nullopt;
  return (*t)["speedup"].get<double>();
}

}  // namespace

bool GenerateOnce(TrainerBackend& backend, const GenerateRequest& req, const std::string& path, GenerateResult* g,
                  std::string* err, TrainerError* terr) {
  std::string text, why;
  if (util::ReadFile(path, &text, &why) && GenerationFromJson(json::parse(text, nullptr, false), g) &&
      g->samples.size() == PromptCount(req) * size_t(req.n))
    return true;
  *g = {};
  if (!backend.Generate(req, g, terr)) return *err = "generate: " + terr->message, false;
  return util::WriteFileAtomic(path, GenerationToJson(*g).dump() + "\n", err);
}

bool RenderCoderPrompt(const RolloutTask& t, const RolloutOptions& o, std::string* prompt, std::string* err) {
  std::string why;
  if (!generate::RenderTemplate(o.prompt_template, {{"task_source", t.source}, {"task_name", t.id}, {"task_id", t.id},
                                                    {"level", "0"}, {"problem", "0"}, {"backend", o.backend}},
                                prompt, &why))
    return *err = "prompt template: " + why, false;
  return true;
}

bool VerifyReplies(const VerifyFn& verify, const std::vector<RolloutTask>& tasks, const std::string& backend,
                   const GenerateResult& g, const std::vector<std::pair<size_t, int>>& owners,
                   const std::string& dir, std::vector<RolloutSample>* out, std::string* err) {
  std::string log_path = dir + "/verdicts.jsonl";
  auto done = scoring::LoadVerdictLog(log_path).records;
  out->clear();
  std::vector<verify::Sample> pending;
  std::vector<size_t> pending_index;
  for (size_t k = 0; k < g.samples.size(); ++k) {
    const auto& s = g.samples[k];
    RolloutSample r;
    std::tie(r.task, r.sample) = owners.at(k);
    size_t p = size_t(s.prompt_index);
    r.prompt_ids = p < g.prompt_ids.size() ? g.prompt_ids[p] : std::vector<int>{};
    r.completion_ids = s.token_ids;
    r.logprobs = s.logprobs;
    r.reply = s.text;
    auto x = generate::ExtractCode(s.text, s.finish_reason, false);
    r.code = x.code;
    const auto& task = tasks.at(r.task);
    std::string key = scoring::ResumeKey(task.id, r.sample, util::Hash128Hex(r.code));
    if (x.reason) {
      r.verdict = {{"status", "no_code"}, {"reason", generate::ReasonName(*x.reason)}};
    } else if (auto it = done.find(key); it != done.end()) {
      r.verdict = it->second.value("verdict", json::object());
    } else {
      std::string cand = dir + "/candidates/" + task.id + "_" + std::to_string(r.sample) + ".py";
      if (!util::WriteFileAtomic(cand, r.code, err)) return false;
      pending.push_back({task.path, cand, backend, std::nullopt, task.id + "#" + std::to_string(r.sample)});
      pending_index.push_back(out->size());
    }
    out->push_back(std::move(r));
  }
  scoring::VerdictLog log;
  if (!pending.empty()) {
    if (!log.Open(log_path, err)) return false;
    std::string append_err;
    verify(pending, [&](size_t i, const json& v) {
      RolloutSample& r = (*out)[pending_index[i]];
      r.verdict = v;
      json record = {{"task", tasks[r.task].id}, {"sample", r.sample}, {"code_xxh", util::Hash128Hex(r.code)},
                     {"verdict", v}};
      if (!log.Append(record, &append_err)) util::LogWarn("train: " + append_err);
    });
    if (!append_err.empty()) return *err = append_err, false;
  }
  for (auto& r : *out) {
    r.correct = r.verdict.value("status", "") == "correct";
    if (r.correct) r.speedup = Speedup(r.verdict);
  }
  return true;
}

bool Rollout(TrainerBackend& backend, const VerifyFn& verify, const std::vector<RolloutTask>& tasks,
             const RolloutOptions& o, const std::string& unit_dir, std::vector<RolloutSample>* out,
             std::string* err, TrainerError* terr) {
  GenerateResult g;
  if (!Generate(backend, tasks, o, unit_dir, &g, err, terr)) return false;
  std::vector<std::pair<size_t, int>> owners;
  for (size_t k = 0; k < g.samples.size(); ++k)
    owners.emplace_back(size_t(g.samples[k].prompt_index), int(k % size_t(o.n)));
  return VerifyReplies(verify, tasks, o.backend, g, owners, unit_dir, out, err);
}

bool LoadTasks(const std::string& dir, std::vector<RolloutTask>* out, std::string* err) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".py") paths.push_back(e.path().string());
  if (ec) return *err = "cannot read the task directory " + dir + ": " + ec.message(), false;
  if (paths.empty()) return *err = dir + " holds no task files (*.py)", false;
  std::sort(paths.begin(), paths.end());
  out->clear();
  for (const auto& p : paths) {
    RolloutTask t;
    t.path = p;
    t.id = std::filesystem::path(p).stem().string();
    if (!util::ReadFile(p, &t.source, err)) return false;
    out->push_back(std::move(t));
  }
  return true;
}

}  // namespace kz::train
