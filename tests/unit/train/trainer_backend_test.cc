// The trainer backend client against a fake backend (fake_trainer.py: the protocol's
// frames, no torch) that crashes, hangs or answers wrongly on request.
#include "train/trainer_backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

namespace kz::train {
namespace {
namespace fs = std::filesystem;

class TrainerBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kz_train_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  TrainerConfig Fake(const std::string& mode) {
    TrainerConfig c;
    c.argv = {"python3", KZ_FAKE_TRAINER};
    c.package_dir = KZ_PYTHON_DIR;
    c.env = {{"KZ_FAKE_MODE", mode}, {"KZ_FAKE_STATE", (dir_ / "state").string()}};
    return c;
  }
  static TrainStepRequest Step() {
    TrainStepRequest r;
    r.samples = {{{1, 2}, {3, 4, 5}, 1.0, {-0.1, -0.2, -0.3}, {}}, {{1}, {6}, -1.0, {}, {}}};
    return r;
  }
  fs::path dir_;
};

TEST_F(TrainerBackendTest, HelloAndTypedOps) {
  TrainerBackend b(Fake(""));
  HelloInfo hello;
  TrainerError err;
  ASSERT_TRUE(b.Start(&hello, &err)) << err.message;
  EXPECT_EQ(hello.protocol, 1);
  EXPECT_EQ(hello.backend, "fake");
  LoadResult load;
  ASSERT_TRUE(b.Load({.model = "fake:model"}, &load, &err)) << err.message;
  EXPECT_EQ(load.model, "fake:model");
  EXPECT_EQ(load.parameters, 10);
  GenerateResult gen;
  ASSERT_TRUE(b.Generate({.prompts = {"a", "b"}, .n = 2}, &gen, &err)) << err.message;
  ASSERT_EQ(gen.samples.size(), 4u);
  EXPECT_EQ(gen.samples[3].prompt_index, 1);
  EXPECT_EQ(gen.samples[0].logprobs, (std::vector<double>{-0.5, -0.25}));
  TrainStepResult step;
  ASSERT_TRUE(b.TrainStep(Step(), &step, &err)) << err.message;
  EXPECT_EQ(step.loss, 0.5);
  EXPECT_EQ(step.tokens, 4);
  EXPECT_EQ(step.clip_fraction, 0.25);
  EXPECT_DOUBLE_EQ(step.timings.overhead_s, 0.1);
  EXPECT_GT(step.wall_s, 0);
  TrainStepRequest nan_step = Step();
  nan_step.lr = -1;  // the fake answers loss null: a non-finite loss arrives as NaN
  ASSERT_TRUE(b.TrainStep(nan_step, &step, &err)) << err.message;
  EXPECT_TRUE(std::isnan(step.loss));
  SftResult sft;
  ASSERT_TRUE(b.Sft({.samples = {{"p", "c", {}, {}}}}, &sft, &err)) << err.message;
  EXPECT_EQ(sft.loss, 2.0);
  SaveResult save;
  ASSERT_TRUE(b.Save({.path = (dir_ / "ckpt").string()}, &save, &err)) << err.message;
  EXPECT_EQ(b.last_checkpoint(), (dir_ / "ckpt").string());
  EXPECT_TRUE(b.Shutdown(&err)) << err.message;
  EXPECT_FALSE(b.running());
}

TEST_F(TrainerBackendTest, BackendErrorKeepsTheProcess) {
  TrainerBackend b(Fake(""));
  TrainerError err;
  ASSERT_TRUE(b.Start(nullptr, &err)) << err.message;
  LoadResult load;
  EXPECT_FALSE(b.Load({.model = (dir_ / "missing").string()}, &load, &err));
  EXPECT_EQ(err.failure, TrainerFailure::kBackend);
  EXPECT_EQ(err.kind, "load_error");
  EXPECT_NE(err.message.find("does not exist"), std::string::npos) << err.message;
  EXPECT_FALSE(err.needs_restart());
  nlohmann::json reply;
  EXPECT_FALSE(b.Call("frobnicate", nlohmann::json::object(), 10, &reply, &err));
  EXPECT_EQ(err.kind, "protocol");
  EXPECT_TRUE(b.running());
  EXPECT_TRUE(b.Load({.model = "fake:ok"}, &load, &err)) << err.message;
}

TEST_F(TrainerBackendTest, CrashMidStepIsReportedAndRecovered) {
  TrainerBackend b(Fake("crash_on_train_step"));
  TrainerError err;
  ASSERT_TRUE(b.Start(nullptr, &err)) << err.message;
  LoadResult load;
  ASSERT_TRUE(b.Load({.model = "fake:base"}, &load, &err)) << err.message;
  SaveResult save;
  ASSERT_TRUE(b.Save({.path = "fake:ckpt-1"}, &save, &err)) << err.message;
  TrainStepResult step;
  EXPECT_FALSE(b.TrainStep(Step(), &step, &err));
  EXPECT_EQ(err.failure, TrainerFailure::kCrashed);
  EXPECT_TRUE(err.needs_restart());
  EXPECT_NE(err.message.find("exited with code 3"), std::string::npos) << err.message;
  EXPECT_NE(err.message.find("train_step"), std::string::npos) << err.message;
  EXPECT_NE(err.stderr_tail.find("illegal memory access"), std::string::npos) << err.stderr_tail;
  EXPECT_FALSE(b.running());
  EXPECT_FALSE(b.TrainStep(Step(), &step, &err));
  EXPECT_EQ(err.failure, TrainerFailure::kNotRunning);
  // Restart and reload from the last checkpoint, then the step goes through.
  ASSERT_TRUE(b.Recover(&load, &err)) << err.message;
  EXPECT_EQ(load.model, "fake:ckpt-1");
  EXPECT_TRUE(b.TrainStep(Step(), &step, &err)) << err.message;
}

TEST_F(TrainerBackendTest, HangPastTheDeadlineIsKilled) {
  TrainerConfig c = Fake("hang_on_train_step");
  c.timeouts.train_step_s = 1.0;
  TrainerBackend b(c);
  TrainerError err;
  ASSERT_TRUE(b.Start(nullptr, &err)) << err.message;
  LoadResult load;
  ASSERT_TRUE(b.Load({.model = "fake:base"}, &load, &err)) << err.message;
  auto t0 = std::chrono::steady_clock::now();
  TrainStepResult step;
  EXPECT_FALSE(b.TrainStep(Step(), &step, &err));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(err.failure, TrainerFailure::kTimeout);
  EXPECT_NE(err.message.find("did not answer op train_step within 1.0 s"), std::string::npos) << err.message;
  EXPECT_LT(s, 10.0);
  EXPECT_FALSE(b.running());
  ASSERT_TRUE(b.Recover(&load, &err)) << err.message;
  EXPECT_EQ(load.model, "fake:base") << "no checkpoint saved: the last load's model";
  EXPECT_TRUE(b.TrainStep(Step(), &step, &err)) << err.message;
}

TEST_F(TrainerBackendTest, MalformedRepliesAreProtocolErrors) {
  for (const char* mode : {"malformed_on_generate", "wrong_id_on_score", "bad_length_on_sft"}) {
    SCOPED_TRACE(mode);
    fs::remove(dir_ / "state");
    TrainerBackend b(Fake(mode));
    TrainerError err;
    ASSERT_TRUE(b.Start(nullptr, &err)) << err.message;
    GenerateResult gen;
    ScoreResult score;
    SftResult sft;
    bool ok = std::string(mode).find("generate") != std::string::npos
                  ? b.Generate({.prompts = {"x"}}, &gen, &err)
              : std::string(mode).find("score") != std::string::npos
                  ? b.Score({.samples = {{{1}, {2}}}}, &score, &err)
                  : b.Sft({.samples = {{"p", "c", {}, {}}}}, &sft, &err);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err.failure, TrainerFailure::kProtocol) << err.message;
    EXPECT_TRUE(err.needs_restart());
    EXPECT_FALSE(b.running()) << "a backend out of step is killed";
    HelloInfo hello;
    ASSERT_TRUE(b.Restart(&hello, &err)) << err.message;
    EXPECT_TRUE(b.Generate({.prompts = {"x"}}, &gen, &err)) << err.message;
  }
}

TEST_F(TrainerBackendTest, StartFailures) {
  TrainerError err;
  {
    TrainerBackend b(Fake("exit_at_start"));
    EXPECT_FALSE(b.Start(nullptr, &err));
    EXPECT_EQ(err.failure, TrainerFailure::kCrashed);
    EXPECT_NE(err.stderr_tail.find("refusing to start"), std::string::npos) << err.stderr_tail;
  }
  {
    TrainerBackend b(Fake("old_protocol"));
    EXPECT_FALSE(b.Start(nullptr, &err));
    EXPECT_EQ(err.failure, TrainerFailure::kProtocol);
    EXPECT_NE(err.message.find("protocol 0"), std::string::npos) << err.message;
    EXPECT_FALSE(b.running());
  }
  {
    TrainerConfig c = Fake("");
    c.argv = {(dir_ / "no-such-interpreter").string()};
    TrainerBackend b(c);
    EXPECT_FALSE(b.Start(nullptr, &err));
    EXPECT_TRUE(err.needs_restart());
  }
  TrainerBackend idle(Fake(""));
  EXPECT_FALSE(idle.Recover(nullptr, &err));
  EXPECT_EQ(err.failure, TrainerFailure::kNotRunning);
}

}  // namespace
}  // namespace kz::train
