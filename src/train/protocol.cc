#include "train/protocol.h"

#include <limits>

namespace kz::train {
namespace {
using nlohmann::json;

template <typename T>
T Get(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

// A number the backend sends as null when it is not finite (JSON has no NaN): NaN here.
double Num(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::numeric_limits<double>::quiet_NaN() : it->get<double>();
}

StepTimings TimingsFromJson(const json& j) {
  StepTimings t;
  if (!j.is_object()) return t;
  t.total_s = Get(j, "total_s", 0.0);
  t.model_s = Get(j, "model_s", 0.0);
  t.reference_s = Get(j, "reference_s", 0.0);
  t.optimizer_s = Get(j, "optimizer_s", 0.0);
  t.overhead_s = Get(j, "overhead_s", 0.0);
  return t;
}
}  // namespace

json ToJson(const LoadRequest& r) {
  json j = {{"model", r.model}, {"dtype", r.dtype}, {"device", r.device}, {"reference", r.reference},
            {"seed", r.seed}, {"max_grad_norm", r.max_grad_norm},
            {"optimizer", {{"lr", r.lr}, {"weight_decay", r.weight_decay}}}};
  if (r.lora) {
    j["lora"] = {{"r", r.lora->r}, {"alpha", r.lora->alpha}, {"dropout", r.lora->dropout}};
    if (!r.lora->target_modules.empty()) j["lora"]["target_modules"] = r.lora->target_modules;
  }
  return j;
}

size_t PromptCount(const GenerateRequest& r) {
  return r.conversations.empty() ? r.prompts.size() : r.conversations.size();
}

json ToJson(const GenerateRequest& r) {
  json prompts = r.prompts;
  if (!r.conversations.empty()) {
    prompts = json::array();
    for (const auto& c : r.conversations) {
      json messages = json::array();
      for (const auto& m : c) messages.push_back({{"role", m.role}, {"content", m.content}});
      prompts.push_back({{"messages", messages}});
    }
  }
  return {{"prompts", prompts}, {"n", r.n}, {"temperature", r.temperature}, {"top_p", r.top_p},
          {"max_new_tokens", r.max_new_tokens}, {"seed", r.seed}, {"chat", r.chat}};
}

json ToJson(const ScoreRequest& r) {
  json samples = json::array();
  for (const auto& s : r.samples)
    samples.push_back({{"prompt_ids", s.prompt_ids}, {"completion_ids", s.completion_ids}});
  return {{"samples", samples}, {"temperature", r.temperature}, {"micro_batch_size", r.micro_batch_size}};
}

json ToJson(const TrainStepRequest& r) {
  json samples = json::array();
  for (const auto& s : r.samples) {
    json o = {{"prompt_ids", s.prompt_ids}, {"completion_ids", s.completion_ids}, {"advantage", s.advantage}};
    if (!s.old_logprobs.empty()) o["old_logprobs"] = s.old_logprobs;
    if (!s.ref_logprobs.empty()) o["ref_logprobs"] = s.ref_logprobs;
    samples.push_back(std::move(o));
  }
  json j = {{"samples", samples}, {"clip_eps", r.clip_eps}, {"kl_coef", r.kl_coef},
            {"temperature", r.temperature}};
  if (r.clip_eps_high) j["clip_eps_high"] = *r.clip_eps_high;
  if (r.micro_batch_size > 0) j["micro_batch_size"] = r.micro_batch_size;
  if (r.lr) j["lr"] = *r.lr;
  return j;
}

json ToJson(const SftRequest& r) {
  json samples = json::array();
  for (const auto& s : r.samples) {
    json o = json::object();
    if (!s.prompt_ids.empty()) o["prompt_ids"] = s.prompt_ids;
    else o["prompt"] = s.prompt;
    if (!s.completion_ids.empty()) o["completion_ids"] = s.completion_ids;
    else o["completion"] = s.completion;
    samples.push_back(std::move(o));
  }
  json j = {{"samples", samples}, {"add_eos", r.add_eos}, {"chat", r.chat}};
  if (r.micro_batch_size > 0) j["micro_batch_size"] = r.micro_batch_size;
  if (r.lr) j["lr"] = *r.lr;
  return j;
}

json ToJson(const SaveRequest& r) { return {{"path", r.path}, {"optimizer", r.optimizer}}; }

HelloInfo HelloFromJson(const json& j) {
  HelloInfo h;
  h.protocol = Get(j, "protocol", 0);
  h.backend = Get<std::string>(j, "backend", "");
  h.python = Get<std::string>(j, "python", "");
  h.device = Get<std::string>(j, "device", "");
  h.device_name = Get<std::string>(j, "device_name", "");
  h.cuda_devices = Get(j, "cuda_devices", 0);
  h.pid = Get(j, "pid", 0);
  h.versions = j.value("versions", json::object());
  return h;
}

LoadResult LoadFromJson(const json& j) {
  LoadResult r;
  r.model = Get<std::string>(j, "model", "");
  r.format = Get<std::string>(j, "format", "");
  r.device = Get<std::string>(j, "device", "");
  r.dtype = Get<std::string>(j, "dtype", "");
  r.parameters = Get<int64_t>(j, "parameters", 0);
  r.trainable_parameters = Get<int64_t>(j, "trainable_parameters", 0);
  r.steps = Get(j, "steps", 0);
  r.lora = j.contains("lora") && !j["lora"].is_null();
  r.optimizer_restored = Get(j, "optimizer_restored", false);
  r.seconds = Get(j, "seconds", 0.0);
  return r;
}

GenerateResult GenerateFromJson(const json& j) {
  GenerateResult r;
  for (const auto& s : j.value("samples", json::array())) {
    GeneratedSample g;
    g.prompt_index = Get(s, "prompt_index", 0);
    g.text = Get<std::string>(s, "text", "");
    g.finish_reason = Get<std::string>(s, "finish_reason", "");
    g.token_ids = Get(s, "token_ids", std::vector<int>{});
    g.logprobs = Get(s, "logprobs", std::vector<double>{});
    r.samples.push_back(std::move(g));
  }
  r.prompt_ids = Get(j, "prompt_ids", std::vector<std::vector<int>>{});
  r.tokens = Get<int64_t>(j, "tokens", 0);
  r.seconds = Get(j, "seconds", 0.0);
  return r;
}

ScoreResult ScoreFromJson(const json& j) {
  ScoreResult r;
  r.logprobs = Get(j, "logprobs", std::vector<std::vector<double>>{});
  r.seconds = Get(j, "seconds", 0.0);
  return r;
}

namespace {
void StepFromJson(const json& j, StepResult* r) {
  r->loss = Num(j, "loss");
  r->grad_norm = Num(j, "grad_norm");
  r->tokens = Get<int64_t>(j, "tokens", 0);
  r->samples = Get(j, "samples", 0);
  r->micro_batches = Get(j, "micro_batches", 0);
  r->step = Get(j, "step", 0);
  r->timings = TimingsFromJson(j.value("timings", json::object()));
}
}  // namespace

TrainStepResult TrainStepFromJson(const json& j) {
  TrainStepResult r;
  StepFromJson(j, &r);
  r.pg_loss = Num(j, "pg_loss");
  r.clip_fraction = Get(j, "clip_fraction", 0.0);
  r.ratio_mean = Get(j, "ratio_mean", 0.0);
  if (j.contains("kl") && !j["kl"].is_null()) r.kl = j["kl"].get<double>();
  return r;
}

SftResult SftFromJson(const json& j) {
  SftResult r;
  StepFromJson(j, &r);
  return r;
}

SaveResult SaveFromJson(const json& j) {
  SaveResult r;
  r.path = Get<std::string>(j, "path", "");
  r.bytes = Get<int64_t>(j, "bytes", 0);
  r.steps = Get(j, "steps", 0);
  r.seconds = Get(j, "seconds", 0.0);
  return r;
}

}  // namespace kz::train
