// Issue 7: one run child per GPU slot, pinned to that GPU. A child started for GPU k —
// fresh, or prestarted for the slot — sees exactly CUDA_VISIBLE_DEVICES=k (the host's
// index) and not the Triton interpreter, for each of 8 GPUs of an 8-GPU host. The fake
// worker stands in for kz_worker: it records its environment and replies.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fake_worker.h"
#include "util/fs.h"
#include "verify/verifier.h"

namespace kz::verify {
namespace {

class VerifierPinningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "pinning-", &err);
    ASSERT_FALSE(dir_.empty()) << err;
    ASSERT_TRUE(util::WriteFileAtomic(dir_ + "/task.py", "class Model: pass\n", &err));
    ASSERT_TRUE(util::WriteFileAtomic(dir_ + "/cand.py", "class ModelNew: pass\n", &err));
    worker_ = testing_support::FakeWorker(
        "open('" + dir_ + "/env-%d' % os.getpid(), 'w').write('%s %s' % (\n"
        "    os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>'), os.environ.get('TRITON_INTERPRET', '<unset>')))\n"
        "send({'ok': True, 'result': {}})\n");
    options_.screen = false;
    options_.cache_dir = dir_ + "/cache";
    options_.timeout_s = 60;
    for (int k = 0; k < 8; ++k) gpus_.push_back(Gpu{k, "NVIDIA H200", "9.0"});
  }
  void TearDown() override { util::RemoveAll(dir_); }

  // The environments the children wrote since the last call ("CVD TRITON_INTERPRET").
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
  worker::WorkerConfig worker_;
  VerifyOptions options_;
  std::vector<Gpu> gpus_;
};

TEST_F(VerifierPinningTest, EachGpuSlotsChildSeesOnlyItsGpu) {
  Verifier v(worker_, options_, gpus_);
  ASSERT_TRUE(v.on_gpu());
  std::vector<Sample> samples{{dir_ + "/task.py", dir_ + "/cand.py", "triton", std::nullopt, "s"}};
  for (const Gpu& g : gpus_) {
    auto work = v.Stage(samples);
    ASSERT_EQ(work.size(), 1u);
    ASSERT_FALSE(Verifier::Final(work[0])) << work[0].verdict.dump();
    v.Finish(work[0], g);
    auto envs = TakeEnvs();
    ASSERT_EQ(envs.size(), 1u) << "GPU " << g.index << ": one run child";
    EXPECT_EQ(envs[0], std::to_string(g.index) + " <unset>") << "GPU " << g.index;
  }
}

TEST_F(VerifierPinningTest, APrestartedChildIsPinnedToItsSlotsGpu) {
  Verifier v(worker_, options_, gpus_);
  std::vector<Sample> samples{{dir_ + "/task.py", dir_ + "/cand.py", "triton", std::nullopt, "s"}};
  for (int k : {3, 7}) {
    auto pre = Verifier::Prestart(worker_, options_, gpus_[k]);
    auto work = v.Stage(samples);
    ASSERT_EQ(work.size(), 1u);
    v.Finish(work[0], gpus_[k], &pre);
    auto envs = TakeEnvs();
    ASSERT_EQ(envs.size(), 1u) << "the prestarted child ran the sample, no second child";
    EXPECT_EQ(envs[0], std::to_string(k) + " <unset>");
  }
}

}  // namespace
}  // namespace kz::verify
