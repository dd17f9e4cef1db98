// Typed requests and replies of the trainer backend protocol (docs/train-protocol.md) and
// their JSON. Field names are the protocol's; defaults are the backend's.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::train {

inline constexpr int kTrainProtocolVersion = 1;

struct HelloInfo {
  int protocol = 0;
  std::string backend, python, device, device_name;
  int cuda_devices = 0, pid = 0;
  nlohmann::json versions;  // {"torch": "2.11.0", "transformers": ..., "peft": ... | null}
};

struct LoraOptions {
  int r = 8, alpha = 16;
  double dropout = 0;
  std::vector<std::string> target_modules{};  // empty: q_proj, v_proj
};

struct LoadRequest {
  std::string model{};  // a Hugging Face directory, a .gguf file, or a checkpoint kz_train saved
  std::string dtype = "float32";
  std::string device = "auto";  // auto | cpu | cuda | cuda:N
  std::optional<LoraOptions> lora{};
  bool reference = false;  // keep a frozen copy for the KL term (LoRA: the adapter switched off)
  double lr = 1e-5, weight_decay = 0, max_grad_norm = 1.0;
  int seed = 0;
};
struct LoadResult {
  std::string model, format, device, dtype;
  int64_t parameters = 0, trainable_parameters = 0;
  int steps = 0;
  bool lora = false, optimizer_restored = false;
  double seconds = 0;
};

struct ChatMessage {
  std::string role, content;  // "system" | "user" | "assistant"
};

struct GenerateRequest {
  std::vector<std::string> prompts{};
  // Instead of prompts (when non-empty): whole conversations, each rendered with the
  // tokenizer's chat template and a generation prompt (multi-turn refinement's later turns).
  std::vector<std::vector<ChatMessage>> conversations{};
  int n = 1;                  // samples per prompt
  double temperature = 1.0;   // 0: greedy
  double top_p = 1.0;
  int max_new_tokens = 64;
  int seed = 0;
  bool chat = false;          // wrap each prompt in the tokenizer's chat template
};
struct GeneratedSample {
  int prompt_index = 0;
  std::string text, finish_reason;  // "stop" (EOS, included in token_ids) | "length"
  std::vector<int> token_ids;
  std::vector<double> logprobs;     // per token, at the sampling temperature
};
struct GenerateResult {
  std::vector<GeneratedSample> samples;  // n per prompt, in prompt order
  std::vector<std::vector<int>> prompt_ids;
  int64_t tokens = 0;
  double seconds = 0;
};

struct TokenSample {
  std::vector<int> prompt_ids{}, completion_ids{};
};
struct ScoreRequest {
  std::vector<TokenSample> samples{};
  double temperature = 1.0;
  int micro_batch_size = 8;
};
struct ScoreResult {
  std::vector<std::vector<double>> logprobs;  // per completion token
  double seconds = 0;
};

struct PolicySample {
  std::vector<int> prompt_ids{}, completion_ids{};
  double advantage = 0;
  std::vector<double> old_logprobs{};  // empty: the current policy's (ratio 1, on-policy)
  std::vector<double> ref_logprobs{};  // empty: from the reference when kl_coef > 0
};
struct TrainStepRequest {
  std::vector<PolicySample> samples{};
  double clip_eps = 0.2;
  std::optional<double> clip_eps_high{};  // default clip_eps
  double kl_coef = 0;
  double temperature = 1.0;
  int micro_batch_size = 0;  // 0: one micro-batch; else gradient accumulation
  std::optional<double> lr{};
};
struct StepTimings {
  double total_s = 0, model_s = 0, reference_s = 0, optimizer_s = 0, overhead_s = 0;
};
// What train_step and sft both answer.
struct StepResult {
  double loss = 0, grad_norm = 0;  // NaN when the backend sent null (not finite)
  int64_t tokens = 0;              // completion tokens of the step
  int samples = 0, micro_batches = 0, step = 0;
  StepTimings timings;  // the backend's own clock
  double wall_s = 0;    // the client's: request written to reply decoded
};
struct TrainStepResult : StepResult {
  double pg_loss = 0, clip_fraction = 0, ratio_mean = 0;
  std::optional<double> kl;
};

struct SftSample {
  std::string prompt{}, completion{};              // text, or
  std::vector<int> prompt_ids{}, completion_ids{};  // ids (win when non-empty)
};
struct SftRequest {
  std::vector<SftSample> samples{};
  int micro_batch_size = 0;
  bool add_eos = true;  // append EOS to completion text
  bool chat = false;
  std::optional<double> lr{};
};
struct SftResult : StepResult {};

struct SaveRequest {
  std::string path{};
  bool optimizer = false;  // also the optimizer's state (resume exactly; ~2x the weights)
};
struct SaveResult {
  std::string path;
  int64_t bytes = 0;
  int steps = 0;
  double seconds = 0;
};

nlohmann::json ToJson(const LoadRequest& r);
nlohmann::json ToJson(const GenerateRequest& r);
size_t PromptCount(const GenerateRequest& r);  // conversations when set, else prompts
nlohmann::json ToJson(const ScoreRequest& r);
nlohmann::json ToJson(const TrainStepRequest& r);
nlohmann::json ToJson(const SftRequest& r);
nlohmann::json ToJson(const SaveRequest& r);

// Replies: missing fields keep their defaults; a wrongly typed field throws
// nlohmann::json::exception (the client reports it as a protocol error).
HelloInfo HelloFromJson(const nlohmann::json& j);
LoadResult LoadFromJson(const nlohmann::json& j);
GenerateResult GenerateFromJson(const nlohmann::json& j);
ScoreResult ScoreFromJson(const nlohmann::json& j);
TrainStepResult TrainStepFromJson(const nlohmann::json& j);
SftResult SftFromJson(const nlohmann::json& j);
SaveResult SaveFromJson(const nlohmann::json& j);

}  // namespace kz::train
