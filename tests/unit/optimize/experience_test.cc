// The experience library: records found by their signature (FTS5, BM25), keyed writes that a
// redone iteration cannot double, demotion by win rate, a newer schema refused.
#include <gtest/gtest.h>

#include <filesystem>

#include <sqlite3.h>

#include "optimize/experience.h"
#include "optimize/mutation.h"

namespace kz::optimize {
namespace {

class ExperienceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kz_exp_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    std::string err;
    lib_ = ExperienceLibrary::Open((dir_ / "e.db").string(), &err);
    ASSERT_TRUE(lib_) << err;
  }
  void TearDown() override {
    lib_.reset();
    std::filesystem::remove_all(dir_);
  }
  int64_t AddOne(const std::string& sig, const std::string& change, double effect, const std::string& key) {
    Experience e;
    e.signature = sig;
    e.structure = "triton, 1 kernel(s)";
    e.change = change;
    e.effect = effect;
    e.gpu = "H200";
    int64_t id = 0;
    std::string err;
    EXPECT_TRUE(lib_->Add(e, key, &id, &err)) << err;
    return id;
  }
  std::filesystem::path dir_;
  std::unique_ptr<ExperienceLibrary> lib_;
};

TEST_F(ExperienceTest, RetrievesByTheBestMatchingSignature) {
  AddOne("triton softmax kernels1 launches1 memorybound", "BLOCK 4096", 1.8, "run/c1");
  AddOne("triton matmul kernels1 launches1 computebound", "tl.dot", 2.5, "run/c2");
  std::vector<Experience> out;
  std::string err;
  ASSERT_TRUE(lib_->Retrieve(SignatureOf("return torch.softmax(x, dim=1)", "triton", {1, 1, 1}), 3, &out, &err)) << err;
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0].change, "BLOCK 4096");  // softmax + memorybound beat the matmul record
  ASSERT_TRUE(lib_->Retrieve("conv3d", 3, &out, &err));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(lib_->Retrieve("\"quoted\" OR * NEAR(", 3, &out, &err)) << err;  // FTS syntax is data
}

TEST_F(ExperienceTest, AKeyIsWrittenOnce) {
  int64_t a = AddOne("triton relu", "x", 1.5, "run/c3");
  int64_t b = AddOne("triton relu", "x", 1.5, "run/c3");
  EXPECT_EQ(a, b);
  std::string err;
  ASSERT_TRUE(lib_->RecordUse(a, true, "run/c4", &err)) << err;
  ASSERT_TRUE(lib_->RecordUse(a, true, "run/c4", &err)) << err;  // a redone iteration
  Experience e;
  ASSERT_TRUE(lib_->Get(a, &e, &err));
  EXPECT_EQ(e.uses, 1);
  EXPECT_EQ(e.wins, 1);
}

TEST_F(ExperienceTest, ALosingRecordIsDemoted) {
  int64_t id = AddOne("triton relu", "num_warps 16", 1.2, "run/c5");
  std::string err;
  std::vector<Experience> out;
  for (int i = 0; i < kMinUses; ++i) ASSERT_TRUE(lib_->RecordUse(id, false, "u" + std::to_string(i), &err)) << err;
  ASSERT_TRUE(lib_->Retrieve("relu", 3, &out, &err));
  EXPECT_TRUE(out.empty());
  int64_t good = AddOne("triton relu", "BLOCK 1024", 1.4, "run/c6");
  for (int i = 0; i < kMinUses; ++i) ASSERT_TRUE(lib_->RecordUse(good, i == 0, "g" + std::to_string(i), &err));
  ASSERT_TRUE(lib_->Retrieve("relu", 3, &out, &err));
  EXPECT_TRUE(out.empty());  // 1 win in 3 uses (0.33) is below the 0.34 rate: demoted too
  int64_t best = AddOne("triton relu", "BLOCK 2048", 1.6, "run/c7");
  for (int i = 0; i < kMinUses; ++i) ASSERT_TRUE(lib_->RecordUse(best, i < 2, "b" + std::to_string(i), &err));
  ASSERT_TRUE(lib_->Retrieve("relu", 3, &out, &err));
  ASSERT_EQ(out.size(), 1u);  // 2 of 3 won: kept
  EXPECT_EQ(out[0].change, "BLOCK 2048");
}

TEST_F(ExperienceTest, ANewerSchemaIsRefused) {
  lib_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "e.db").string().c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 7", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  std::string err;
  EXPECT_FALSE(ExperienceLibrary::Open((dir_ / "e.db").string(), &err));
  EXPECT_NE(err.find("schema version 7"), std::string::npos) << err;
}

TEST(MutationApplyTest, ApplyOnlyWhenARecordMatchesAndTheDrawFalls) {
  EXPECT_EQ(ChooseMutation({true, false, false, 0.3, true}), Mutation::kApply);
  EXPECT_EQ(ChooseMutation({true, false, false, 0.3, false}), Mutation::kRewrite);
  EXPECT_EQ(ChooseMutation({true, false, false, 0.6, true}), Mutation::kRewrite);
  EXPECT_EQ(ChooseMutation({true, true, false, 0.3, true}), Mutation::kFix);
  EXPECT_FALSE(WouldApply({false, false, false, 0.3, false}));  // no parent: no library query
  EXPECT_TRUE(WouldApply({true, false, true, 0.3, false}));
}

}  // namespace
}  // namespace kz::optimize
