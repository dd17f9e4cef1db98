// The run with a fake endpoint: files, reasons, failures, resume, order-independent output.
#include "generate/generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "generate/run_log.h"
#include "util/fs.h"

namespace kz::generate {
namespace {
namespace fs = std::filesystem;

// Answers "L1_1/0"-style ids: sample 1 without code, sample 2 fails with a 500; counts calls.
class FakeEndpoint : public Endpoint {
 public:
  Result Complete(const Request& r, const std::atomic<bool>&) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      asked.insert(r.id);
      seeds.insert(r.sampling.seed.value_or(-1));
    }
    Result out;
    out.latency_s = 0.5;
    out.attempts = 1;
    if (r.id.ends_with("/2") && fail_sample_2) {
      out.outcome = Error{ErrorKind::kHttpStatus, 500, "HTTP 500"};
      return out;
    }
    std::string text = r.id.ends_with("/1") ? "no idea" : "```python\nclass ModelNew:\n    id = '" + r.id + "'\n```\n";
    out.outcome = Reply{{{text, "stop", 7}}, {10, 7, 0, 7, false}, "m"};
    return out;
  }
  std::string Describe() const override { return "fake"; }
  std::set<std::string> asked;
  std::set<long long> seeds;
  bool fail_sample_2 = true;

 private:
  std::mutex mu_;
};

class GeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    root_ = util::MakeTempDir(fs::temp_directory_path().string(), "kz_gen_test_", &err);
    fs::create_directories(root_ + "/suite/level1");
    std::string task = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
    ASSERT_TRUE(util::WriteFileAtomic(root_ + "/suite/level1/1_A.py", task, &err));
    ASSERT_TRUE(util::WriteFileAtomic(root_ + "/suite/level1/2_B.py", task, &err));
    o_.suite_dir = root_ + "/suite";
    o_.out_dir = root_ + "/run";
    o_.model = "m";
    o_.samples = 3;
    o_.concurrency = 3;
    o_.sampling.seed = 100;
    t_ = {"t.txt", "Write {{task_name}}:\n{{task_source}}"};
  }
  void TearDown() override { util::RemoveAll(root_); }
  std::string root_;
  GenerateOptions o_;
  PromptTemplate t_;
};

TEST_F(GeneratorTest, WritesResumesAndSorts) {
  FakeEndpoint first;
  std::atomic<bool> cancel{false};
  EXPECT_EQ(RunGenerate(o_, t_, &first, &cancel), 1);  // two requests failed
  EXPECT_EQ(first.asked.size(), 6u);
  EXPECT_EQ(first.seeds, (std::set<long long>{100, 101, 102}));
  LoadedRun run = LoadRun(o_.out_dir + "/generations.jsonl");
  ASSERT_EQ(run.records.size(), 4u);
  const auto& no_code = run.records.at({"L1_1", 1});
  EXPECT_EQ(no_code["reason"], "no_code");
  EXPECT_EQ(no_code["code"], "");
  EXPECT_EQ(no_code["reply"], "no idea");
  const auto& good = run.records.at({"L1_2", 0});
  EXPECT_TRUE(good["reason"].is_null());
  EXPECT_EQ(good["output_tokens"], 7);
  EXPECT_EQ(good["tokens"]["prompt"], 10);
  EXPECT_EQ(good["prompt_xxh"].get<std::string>().size(), 32u);
  std::string file;
  std::string err;
  ASSERT_TRUE(util::ReadFile(o_.out_dir + "/level_1_problem_2_sample_0_kernel.py", &file, &err));
  EXPECT_NE(file.find("class ModelNew"), std::string::npos);
  EXPECT_TRUE(fs::exists(o_.out_dir + "/failures.jsonl"));

  FakeEndpoint second;  // the rerun asks only for the two failed samples
  second.fail_sample_2 = false;
  EXPECT_EQ(RunGenerate(o_, t_, &second, &cancel), 0);
  EXPECT_EQ(second.asked, (std::set<std::string>{"L1_1/2", "L1_2/2"}));
  std::string sorted;
  ASSERT_TRUE(util::ReadFile(o_.out_dir + "/generations.jsonl", &sorted, &err));

  FakeEndpoint third;  // nothing left to ask
  EXPECT_EQ(RunGenerate(o_, t_, &third, &cancel), 0);
  EXPECT_TRUE(third.asked.empty());

  GenerateOptions fresh = o_;  // a fresh run with concurrency 1 gives the same bytes
  fresh.out_dir = root_ + "/run2";
  fresh.concurrency = 1;
  FakeEndpoint again;
  again.fail_sample_2 = false;
  EXPECT_EQ(RunGenerate(fresh, t_, &again, &cancel), 0);
  std::string other;
  ASSERT_TRUE(util::ReadFile(fresh.out_dir + "/generations.jsonl", &other, &err));
  EXPECT_EQ(sorted, other);
}

TEST_F(GeneratorTest, CancelledRunKeepsNothingHalfDone) {
  FakeEndpoint e;
  std::atomic<bool> cancel{true};
  EXPECT_EQ(RunGenerate(o_, t_, &e, &cancel), 130);
  EXPECT_TRUE(e.asked.empty());
}

TEST_F(GeneratorTest, UnknownPlaceholderIsAUsageError) {
  FakeEndpoint e;
  std::atomic<bool> cancel{false};
  PromptTemplate bad{"bad.txt", "{{task_sauce}}"};
  EXPECT_EQ(RunGenerate(o_, bad, &e, &cancel), 2);
  EXPECT_TRUE(e.asked.empty());
}

TEST_F(GeneratorTest, TaskNotUtf8IsSkippedWithAMessage) {
  std::string err;
  ASSERT_TRUE(util::WriteFileAtomic(root_ + "/suite/level1/3_C.py", "# caf\xe9\nclass Model: pass\n", &err));
  FakeEndpoint e;
  e.fail_sample_2 = false;
  std::atomic<bool> cancel{false};
  EXPECT_EQ(RunGenerate(o_, t_, &e, &cancel), 1);
  EXPECT_EQ(e.asked.size(), 6u);
  EXPECT_EQ(e.asked.count("L1_3/0"), 0u);
}

}  // namespace
}  // namespace kz::generate
