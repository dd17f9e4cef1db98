// Resume keys and the append-only verdict log, including a line torn by a kill.
#include <gtest/gtest.h>

#include <fstream>

#include "scoring/verdict_log.h"
#include "util/fs.h"

namespace kz::scoring {
namespace {
using nlohmann::json;

json Rec(const std::string& task, int sample, const std::string& xxh, const std::string& status) {
  return {{"task", task}, {"sample", sample}, {"code_xxh", xxh}, {"status", status}};
}

class VerdictLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "kz_bench_log_", &err);
    path_ = dir_ + "/verdicts.jsonl";
  }
  void TearDown() override { util::RemoveAll(dir_); }
  std::string Text() {
    std::string t, err;
    util::ReadFile(path_, &t, &err);
    return t;
  }
  std::string dir_, path_;
};

TEST(ResumeKey, DistinguishesEveryPart) {
  EXPECT_NE(ResumeKey("L1_1", 0, "aa"), ResumeKey("L1_1", 1, "aa"));
  EXPECT_NE(ResumeKey("L1_1", 0, "aa"), ResumeKey("L1_1", 0, "ab"));
  EXPECT_NE(ResumeKey("L1_1", 0, "aa"), ResumeKey("L1_2", 0, "aa"));
  EXPECT_EQ(*RecordKey(Rec("L1_1", 3, "ff", "correct")), ResumeKey("L1_1", 3, "ff"));
  EXPECT_FALSE(RecordKey(json{{"task", "L1_1"}, {"sample", "0"}, {"code_xxh", "ff"}}));
  EXPECT_FALSE(RecordKey(json::array()));
}

TEST_F(VerdictLogTest, MissingFileIsEmpty) {
  LoadedLog l = LoadVerdictLog(path_);
  EXPECT_TRUE(l.records.empty());
  EXPECT_EQ(l.ignored_lines, 0);
}

TEST_F(VerdictLogTest, AppendThenLoad) {
  std::string err;
  {
    VerdictLog log;
    ASSERT_TRUE(log.Open(path_, &err)) << err;
    ASSERT_TRUE(log.Append(Rec("L1_1", 0, "aa", "correct"), &err)) << err;
    ASSERT_TRUE(log.Append(Rec("L1_1", 1, "bb", "incorrect"), &err)) << err;
  }
  LoadedLog l = LoadVerdictLog(path_);
  ASSERT_EQ(l.records.size(), 2u);
  EXPECT_EQ(l.records.at(ResumeKey("L1_1", 1, "bb"))["status"], "incorrect");
}

TEST_F(VerdictLogTest, TornLastLineIsIgnoredAndCutOnOpen) {
  std::string err;
  std::string good = Rec("L1_1", 0, "aa", "correct").dump() + "\n";
  std::string torn = Rec("L1_1", 1, "bb", "correct").dump();
  // A complete JSON object without its newline is still torn: the write did not finish.
  for (const std::string& tail : {torn.substr(0, torn.size() / 2), torn}) {
    ASSERT_TRUE(util::WriteFileAtomic(path_, good + tail, &err));
    LoadedLog l = LoadVerdictLog(path_);
    EXPECT_EQ(l.records.size(), 1u);
    EXPECT_EQ(l.ignored_lines, 1);
    VerdictLog log;
    ASSERT_TRUE(log.Open(path_, &err)) << err;
    EXPECT_EQ(Text(), good);
    ASSERT_TRUE(log.Append(Rec("L1_1", 1, "bb", "incorrect"), &err));
    EXPECT_EQ(LoadVerdictLog(path_).records.size(), 2u);
    EXPECT_EQ(LoadVerdictLog(path_).ignored_lines, 0);
  }
}

TEST_F(VerdictLogTest, GarbageLinesInTheMiddleAreSkipped) {
  std::string err;
  ASSERT_TRUE(util::WriteFileAtomic(path_, "garbage\n" + Rec("L1_1", 0, "aa", "correct").dump() + "\n{}\n", &err));
  LoadedLog l = LoadVerdictLog(path_);
  EXPECT_EQ(l.records.size(), 1u);
  EXPECT_EQ(l.ignored_lines, 2);
}

}  // namespace
}  // namespace kz::scoring
