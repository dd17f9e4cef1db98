// The real trainer backend end to end on the CPU (ctest train_real): SmolLM2-135M-Instruct's
// GGUF (.models/, scripts/setup.sh) loaded through transformers, 2 prompts x 2 samples, one
// train_step and one sft step (finite losses, the policy's logprobs move), a save, a fresh
// process that loads the checkpoint and gives the same logprobs. Skips with a message when
// the model or transformers is missing, fails instead under KZ_REQUIRE_LLM=1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "train/trainer_backend.h"

namespace kz::train {
namespace {
namespace fs = std::filesystem;

double MaxAbsDiff(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  double d = 0;
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].size(), b[i].size());
    for (size_t j = 0; j < std::min(a[i].size(), b[i].size()); ++j) d = std::max(d, std::abs(a[i][j] - b[i][j]));
  }
  return d;
}

bool Require() {
  const char* r = std::getenv("KZ_REQUIRE_LLM");
  return r && std::string(r) == "1";
}

TEST(TrainReal, GgufGenerateStepSftSaveReload) {
  const char* env_model = std::getenv("KZ_TEST_MODEL");
  std::string model = env_model && *env_model ? env_model : KZ_TEST_MODEL_PATH;
  if (!fs::exists(model)) {
    if (Require()) FAIL() << "KZ_REQUIRE_LLM=1 but the test model " << model << " is missing (scripts/setup.sh)";
    GTEST_SKIP() << "no test model at " << model << " (scripts/setup.sh extracts it)";
  }
  std::string probe = std::string(KZ_PYTHON_BIN) + " -c 'import transformers, gguf' 2>/dev/null";
  if (std::system(probe.c_str()) != 0) {
    if (Require()) FAIL() << "KZ_REQUIRE_LLM=1 but transformers/gguf are not installed (python/requirements-train.txt)";
    GTEST_SKIP() << "transformers or gguf not installed in " << KZ_PYTHON_BIN;
  }
  fs::path dir = fs::temp_directory_path() / ("kz_train_real_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  TrainerConfig config;
  config.python = KZ_PYTHON_BIN;
  config.package_dir = KZ_PYTHON_DIR;
  TrainerBackend b(config);
  TrainerError err;
  HelloInfo hello;
  ASSERT_TRUE(b.Start(&hello, &err)) << err.message << "\n" << err.stderr_tail;
  EXPECT_EQ(hello.device, "cpu");
  LoadResult load;
  ASSERT_TRUE(b.Load({.model = model, .device = "cpu", .lr = 1e-4}, &load, &err)) << err.message << "\n" << err.stderr_tail;
  EXPECT_EQ(load.format, "gguf");
  EXPECT_GT(load.parameters, 100'000'000);
  std::printf("load: %.1f s, %lld parameters\n", load.seconds, static_cast<long long>(load.parameters));

  GenerateResult gen;
  ASSERT_TRUE(b.Generate({.prompts = {"def relu(x):", "Write a CUDA kernel that adds two vectors."}, .n = 2,
                          .temperature = 1.0, .max_new_tokens = 8, .seed = 7},
                         &gen, &err))
      << err.message;
  ASSERT_EQ(gen.samples.size(), 4u);
  ScoreRequest score_req;
  TrainStepRequest step_req;
  step_req.micro_batch_size = 2;  // two micro-batches: gradient accumulation
  const double advantages[] = {1.0, -1.0, 0.5, -0.5};
  for (size_t i = 0; i < gen.samples.size(); ++i) {
    const auto& s = gen.samples[i];
    ASSERT_FALSE(s.token_ids.empty());
    ASSERT_EQ(s.logprobs.size(), s.token_ids.size());
    for (double lp : s.logprobs) EXPECT_TRUE(std::isfinite(lp) && lp <= 0) << lp;
    score_req.samples.push_back({gen.prompt_ids[s.prompt_index], s.token_ids});
    step_req.samples.push_back({gen.prompt_ids[s.prompt_index], s.token_ids, advantages[i], s.logprobs, {}});
  }
  ScoreResult before, after_step, after_sft, saved, reloaded;
  ASSERT_TRUE(b.Score(score_req, &before, &err)) << err.message;
  std::vector<std::vector<double>> sampled;
  for (const auto& s : gen.samples) sampled.push_back(s.logprobs);
  EXPECT_LT(MaxAbsDiff(before.logprobs, sampled), 1e-3) << "generate's logprobs are the policy's";

  TrainStepResult step;
  ASSERT_TRUE(b.TrainStep(step_req, &step, &err)) << err.message;
  EXPECT_TRUE(std::isfinite(step.loss));
  EXPECT_TRUE(std::isfinite(step.grad_norm) && step.grad_norm > 0);
  EXPECT_EQ(step.micro_batches, 2);
  EXPECT_EQ(step.step, 1);
  std::printf("train_step: loss %.4g, grad norm %.3g, %lld tokens, %.2f s (model %.2f s, overhead %.2f s)\n", step.loss,
              step.grad_norm, static_cast<long long>(step.tokens), step.wall_s, step.timings.model_s,
              step.timings.overhead_s);
  ASSERT_TRUE(b.Score(score_req, &after_step, &err)) << err.message;
  EXPECT_GT(MaxAbsDiff(before.logprobs, after_step.logprobs), 1e-4) << "the step changed no parameter";

  SftResult sft;
  ASSERT_TRUE(b.Sft({.samples = {{"def relu(x):", "\n    return x * (x > 0)\n", {}, {}}}}, &sft, &err)) << err.message;
  EXPECT_TRUE(std::isfinite(sft.loss) && sft.loss > 0);
  EXPECT_EQ(sft.step, 2);
  ASSERT_TRUE(b.Score(score_req, &after_sft, &err)) << err.message;
  EXPECT_GT(MaxAbsDiff(after_step.logprobs, after_sft.logprobs), 1e-4) << "the sft step changed no parameter";

  SaveResult save;
  std::string ckpt = (dir / "ckpt").string();
  ASSERT_TRUE(b.Save({.path = ckpt}, &save, &err)) << err.message;
  EXPECT_TRUE(fs::exists(dir / "ckpt" / "model.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "ckpt.tmp"));
  ASSERT_TRUE(b.Score(score_req, &saved, &err)) << err.message;

  // A fresh process from the checkpoint: what a restart after a crash does.
  ASSERT_TRUE(b.Recover(&load, &err)) << err.message << "\n" << err.stderr_tail;
  EXPECT_EQ(load.format, "safetensors");
  EXPECT_EQ(load.steps, 2);
  ASSERT_TRUE(b.Score(score_req, &reloaded, &err)) << err.message;
  double diff = MaxAbsDiff(saved.logprobs, reloaded.logprobs);
  std::printf("reload: max |logprob difference| %.3g\n", diff);
  EXPECT_LE(diff, 1e-5);
  EXPECT_TRUE(b.Shutdown(&err)) << err.message;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kz::train
