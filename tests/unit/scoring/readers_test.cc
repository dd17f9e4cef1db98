// Suite and generation readers: layouts, and every bad input reported without aborting.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scoring/generations.h"
#include "scoring/suite.h"
#include "util/fs.h"

namespace kz::scoring {
namespace {
namespace fs = std::filesystem;

class ReadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "kz_bench_readers_", &err);
    ASSERT_FALSE(dir_.empty()) << err;
    Write("suite/level1/1_ReLU.py", "class Model: pass\n");
    Write("suite/level1/19_Softmax.py", "class Model: pass\n");
    Write("suite/level1/notes.txt", "not a task");
    Write("suite/level_2/3_Conv_ReLU.py", "class Model: pass\n");
    Write("suite/other/4_Ignored.py", "class Model: pass\n");
    ASSERT_TRUE(ReadSuite(dir_ + "/suite", &suite_, &err)) << err;
  }
  void TearDown() override { util::RemoveAll(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(dir_ + "/" + rel).parent_path());
    std::ofstream(dir_ + "/" + rel, std::ios::binary) << text;
  }
  Generations Read(const std::string& rel) {
    Generations g;
    std::string err;
    EXPECT_TRUE(ReadGenerations(dir_ + "/" + rel, suite_, &g, &err)) << err;
    return g;
  }
  std::string dir_;
  Suite suite_;
};

const BadInput* Find(const Generations& g, const std::string& kind) {
  for (const auto& b : g.bad)
    if (b.kind == kind) return &b;
  return nullptr;
}

TEST(Suite, LevelDirNames) {
  EXPECT_EQ(ParseLevelDirName("level1"), 1);
  EXPECT_EQ(ParseLevelDirName("level_2"), 2);
  EXPECT_EQ(ParseLevelDirName("Level-3"), 3);
  EXPECT_EQ(ParseLevelDirName("levels"), 0);
  EXPECT_EQ(ParseLevelDirName("results"), 0);
}

TEST_F(ReadersTest, SuiteLayout) {
  ASSERT_EQ(suite_.tasks.size(), 3u);
  EXPECT_EQ(suite_.tasks.at("L1_19").name, "19_Softmax");
  EXPECT_EQ(suite_.tasks.at("L2_3").level, 2);
  EXPECT_TRUE(fs::path(suite_.tasks.at("L1_1").path).is_absolute());
  Suite empty;
  std::string err;
  EXPECT_FALSE(ReadSuite(dir_ + "/suite/other", &empty, &err));
  EXPECT_FALSE(ReadSuite(dir_ + "/missing", &empty, &err));
}

TEST_F(ReadersTest, SuiteDuplicateProblemNumberWarns) {
  Write("suite/level1/1_ReLU_again.py", "class Model: pass\n");
  Suite s;
  std::string err;
  ASSERT_TRUE(ReadSuite(dir_ + "/suite", &s, &err));
  EXPECT_EQ(s.tasks.at("L1_1").name, "1_ReLU");
  ASSERT_EQ(s.warnings.size(), 1u);
}

TEST_F(ReadersTest, JsonlGoodAndBadLines) {
  Write("g.jsonl",
        R"({"task": "L1_1", "sample": 0, "code": "x = 1", "output_tokens": 12})" "\n"
        R"({"task": {"level": 2, "problem": 3}, "sample": 1, "code": "y = 2", "backend": "cuda"})" "\n"
        "\n"
        R"({"task": "L7_7", "sample": 0, "code": "z"})" "\n"
        R"({"task": "L1_1", "sample": 0, "code": "other"})" "\n"
        R"({"task": "L1_1", "sample": 1, "code": "   \n"})" "\n"
        R"({"task": "L1_1", "sample": 2, "code": "x)" "\xff\xfe" R"("})" "\n"
        "{not json\n"
        R"({"task": "L1_1", "sample": -1, "code": "x"})" "\n"
        R"({"task": "L1_1", "sample": 3, "code": "x", "backend": "opencl"})" "\n");
  Generations g = Read("g.jsonl");
  ASSERT_EQ(g.items.size(), 2u);
  EXPECT_EQ(g.items[0].task_id, "L1_1");
  EXPECT_EQ(*g.items[0].output_tokens, 12);
  EXPECT_EQ(g.items[1].task_id, "L2_3");
  EXPECT_EQ(g.items[1].level, 2);
  EXPECT_EQ(g.items[1].backend, "cuda");
  ASSERT_EQ(g.bad.size(), 7u);
  EXPECT_EQ(Find(g, "unknown_task")->origin, "g.jsonl:4");
  EXPECT_FALSE(Find(g, "unknown_task")->scored);
  EXPECT_EQ(Find(g, "duplicate_sample")->origin, "g.jsonl:5");
  EXPECT_TRUE(Find(g, "empty_code")->scored);
  EXPECT_EQ(*Find(g, "empty_code")->sample, 1);
  EXPECT_EQ(Find(g, "not_utf8")->origin, "g.jsonl:7");
  EXPECT_TRUE(Find(g, "not_utf8")->scored);
  EXPECT_EQ(Find(g, "malformed_line")->origin, "g.jsonl:8");
  int malformed = 0;
  for (const auto& b : g.bad) malformed += b.kind == "malformed_line";
  EXPECT_EQ(malformed, 3);  // line 8 (JSON), 9 (sample), 10 (backend)
}

TEST_F(ReadersTest, KernelBenchDirectoryLayout) {
  Write("gens/level_1_problem_1_sample_0_kernel.py", "code0");
  Write("gens/level_1_problem_1_sample_1_kernel.py", "bad \xc3\x28 bytes");
  Write("gens/level_1_problem_19_sample_0_kernel.py", "");
  Write("gens/level_5_problem_1_sample_0_kernel.py", "code");
  Write("gens/helper.py", "x");
  Write("gens/eval_results.json", "{}");
  Generations g = Read("gens");
  ASSERT_EQ(g.items.size(), 1u);
  EXPECT_EQ(g.items[0].code, "code0");
  EXPECT_EQ(g.items[0].origin, "level_1_problem_1_sample_0_kernel.py");
  ASSERT_EQ(g.bad.size(), 4u);
  EXPECT_EQ(*Find(g, "not_utf8")->sample, 1);
  EXPECT_EQ(Find(g, "empty_code")->task_id, "L1_19");
  EXPECT_NE(Find(g, "unknown_task"), nullptr);
  EXPECT_EQ(Find(g, "unrecognized_file")->origin, "helper.py");
}

TEST_F(ReadersTest, MissingGenerationsIsAnError) {
  Generations g;
  std::string err;
  EXPECT_FALSE(ReadGenerations(dir_ + "/none.jsonl", suite_, &g, &err));
  EXPECT_NE(err.find("none.jsonl"), std::string::npos);
}

TEST(Utf8, Validation) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("µs ≤ 🚀"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
  EXPECT_EQ(ReplaceInvalidUtf8("a\xffz"), "a\xEF\xBF\xBDz");
}

}  // namespace
}  // namespace kz::scoring
