// Issue 7: one run child per GPU slot, pinned to that GPU. A child started for GPU k —
// fresh, or prestarted for the slot — sees exactly CUDA_VISIBLE_DEVICES=k (the host's
// index) and not the Triton interpreter, for each of 8 GPUs of an 8-GPU host. The scripted
// worker records each call's environment; the prestarted child is also checked as a real
// process (the fake kz_worker writes the environment it saw), the integration proof.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fake_worker.h"
#include "scripted_worker.h"
#include "util/fs.h"
#include "verify/verifier.h"

namespace kz::verify {
namespace {
using testing_support::Script;
using testing_support::ScriptedLauncher;

class VerifierPinningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "pinning-", &err);
    ASSERT_FALSE(dir_.empty()) << err;
    ASSERT_TRUE(util::WriteFileAtomic(dir_ + "/task.py", "class Model: pass\n", &err));
    ASSERT_TRUE(util::WriteFileAtomic(dir_ + "/cand.py", "class ModelNew: pass\n", &err));
    options_.screen = false;
    options_.cache_dir = dir_ + "/cache";
    options_.timeout_s = 60;
    for (int k = 0; k < 8; ++k) gpus_.push_back(Gpu{k, "NVIDIA H200", "9.0"});
  }
  void TearDown() override { util::RemoveAll(dir_); }

  // The environments real children wrote since the last call ("CVD TRITON_INTERPRET").
  std::vector<std::string> TakeEnvs() {
    std::vector<std::string> out;
    std::string err;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.path().filename().string().rfind("env-", 0) != 0) continue;
      std::string text;
      if (util::ReadFile(e.path().string(), &text, &err)) out.push_back(text);
      util::RemoveAll(e.path().string());
    }
    return out;
  }

  std::string dir_;
  VerifyOptions options_;
  std::vector<Gpu> gpus_;
};

std::shared_ptr<ScriptedLauncher> Replying() {
  return std::make_shared<ScriptedLauncher>([](const worker::WorkerCall&) {
    return Script().Result({{"status", "correct"}, {"reason", "fake"}});
  });
}

TEST_F(VerifierPinningTest, EachGpuSlotsChildSeesOnlyItsGpu) {
  auto launcher = Replying();
  Verifier v(testing_support::ScriptedWorkerConfig(), options_, gpus_, launcher);
  ASSERT_TRUE(v.on_gpu());
  std::vector<Sample> samples{{dir_ + "/task.py", dir_ + "/cand.py", "triton", std::nullopt, "s"}};
  for (const Gpu& g : gpus_) {
    auto work = v.Stage(samples);
    ASSERT_EQ(work.size(), 1u);
    ASSERT_FALSE(Verifier::Final(work[0])) << work[0].verdict.dump();
    v.Finish(work[0], g);
  }
  auto calls = launcher->Calls();
  ASSERT_EQ(calls.size(), gpus_.size()) << "one run child per GPU";
  for (size_t k = 0; k < calls.size(); ++k) {
    EXPECT_EQ(calls[k].Op(), "run");
    EXPECT_EQ(calls[k].Env("CUDA_VISIBLE_DEVICES"), std::to_string(k));
    EXPECT_EQ(calls[k].Env("TRITON_INTERPRET"), "<unset>");
    EXPECT_EQ(calls[k].call.request.value("device", ""), "cuda");
  }
}

TEST_F(VerifierPinningTest, APrestartedChildIsPinnedToItsSlotsGpu) {
  auto launcher = Replying();
  auto worker = testing_support::ScriptedWorkerConfig();
  Verifier v(worker, options_, gpus_, launcher);
  std::vector<Sample> samples{{dir_ + "/task.py", dir_ + "/cand.py", "triton", std::nullopt, "s"}};
  for (int k : {3, 7}) {
    auto pre = Verifier::Prestart(worker, options_, gpus_[k], launcher);
    auto work = v.Stage(samples);
    ASSERT_EQ(work.size(), 1u);
    auto verdict = v.Finish(work[0], gpus_[k], &pre);
    EXPECT_TRUE(verdict["child"].value("prestarted", false)) << verdict.dump();
  }
  auto calls = launcher->Calls();
  ASSERT_EQ(calls.size(), 2u) << "the prestarted children ran the samples, no second child";
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(calls[i].mode.hold);
    EXPECT_EQ(calls[i].Op(), "run") << "released with the sample's request";
    EXPECT_EQ(calls[i].Env("CUDA_VISIBLE_DEVICES"), i == 0 ? "3" : "7");
  }
}

// The real child process: the environment reaches the prestarted process itself.
TEST_F(VerifierPinningTest, ARealPrestartedProcessSeesOnlyItsGpu) {
  auto worker = testing_support::FakeWorker(
      "open('" + dir_ +
      "/env-%d' % os.getpid(), 'w').write('%s %s' % (\n"
      "    os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'), os.environ.get('TRITON_INTERPRET', '<unset>')))\n"
      "send({'ok': True, 'result': {}})\n");
  Verifier v(worker, options_, gpus_);
  std::vector<Sample> samples{{dir_ + "/task.py", dir_ + "/cand.py", "triton", std::nullopt, "s"}};
  auto pre = Verifier::Prestart(worker, options_, gpus_[5]);
  auto work = v.Stage(samples);
  ASSERT_EQ(work.size(), 1u);
  v.Finish(work[0], gpus_[5], &pre);
  auto envs = TakeEnvs();
  ASSERT_EQ(envs.size(), 1u) << "the prestarted child ran the sample, no second child";
  EXPECT_EQ(envs[0], "5 <unset>");
}

}  // namespace
}  // namespace kz::verify
