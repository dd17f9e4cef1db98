#include "store/job_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "util/fs.h"

namespace kz::store {
namespace {

class StoreTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = util::MakeTempDir(testing::TempDir(), "store-", &err_);
    ASSERT_FALSE(dir_.empty()) << err_;
    path_ = dir_ + "/jobs.db";
  }
  void TearDown() override { util::RemoveAll(dir_); }

  static Job MakeJob(const std::string& id, const std::string& key) {
    Job j;
    j.id = id;
    j.key = key;
    j.state = std::string(kQueued);
    j.submitted_at_ms = 1700000000000;
    j.backend = "triton";
    j.options_json = "{}";
    j.task_hash = "t-hash";
    j.candidate_hash = "c-hash";
    j.task_source = "class Model: pass\n";
    j.candidate_source = "class ModelNew: pass\n";
    return j;
  }

  std::string dir_, path_, err_;
};

TEST_F(StoreTest, InsertThenGetRoundTrips) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  ASSERT_TRUE(s->Insert(MakeJob("a1", "k1"), &err_)) << err_;
  auto j = s->Get("a1", &err_);
  ASSERT_TRUE(j) << err_;
  EXPECT_EQ(j->key, "k1");
  EXPECT_EQ(j->state, kQueued);
  EXPECT_EQ(j->submitted_at_ms, 1700000000000);
  EXPECT_EQ(j->candidate_source, "class ModelNew: pass\n");
  EXPECT_FALSE(j->verdict_json);
  EXPECT_FALSE(s->Get("nope", &err_));
  EXPECT_TRUE(err_.empty()) << "not found is not an error: " << err_;
}

TEST_F(StoreTest, DuplicateIdIsAnError) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  ASSERT_TRUE(s->Insert(MakeJob("a1", "k1"), &err_));
  EXPECT_FALSE(s->Insert(MakeJob("a1", "k2"), &err_));
  EXPECT_NE(err_.find("sqlite"), std::string::npos);
}

TEST_F(StoreTest, StateUpdatesAndFinishKeepTheVerdict) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  ASSERT_TRUE(s->Insert(MakeJob("a1", "k1"), &err_));
  ASSERT_TRUE(s->SetState("a1", kRunning, &err_)) << err_;
  EXPECT_EQ(s->Get("a1", &err_)->state, kRunning);
  ASSERT_TRUE(s->Finish("a1", kDone, R"({"status":"correct"})", &err_)) << err_;
  auto j = s->Get("a1", &err_);
  EXPECT_EQ(j->state, kDone);
  EXPECT_EQ(j->verdict_json.value_or(""), R"({"status":"correct"})");
  EXPECT_FALSE(s->SetState("missing", kRunning, &err_));
  EXPECT_FALSE(s->Finish("missing", kDone, "{}", &err_));
}

TEST_F(StoreTest, FindByKeyReturnsNewestNonFailedJob) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  EXPECT_FALSE(s->FindByKey("k1", &err_));
  ASSERT_TRUE(s->Insert(MakeJob("a1", "k1"), &err_));
  ASSERT_TRUE(s->Insert(MakeJob("b2", "k2"), &err_));
  EXPECT_EQ(s->FindByKey("k1", &err_)->id, "a1");
  ASSERT_TRUE(s->Finish("a1", kFailed, R"({"error":"x"})", &err_));
  EXPECT_FALSE(s->FindByKey("k1", &err_)) << "a failed job is retried, not reused";
  ASSERT_TRUE(s->Insert(MakeJob("c3", "k1"), &err_));
  EXPECT_EQ(s->FindByKey("k1", &err_)->id, "c3");
}

TEST_F(StoreTest, RestartRequeuesQueuedAndRunningInSubmissionOrder) {
  {
    auto s = JobStore::Open(path_, &err_);
    ASSERT_TRUE(s) << err_;
    for (auto id : {"j1", "j2", "j3", "j4"}) ASSERT_TRUE(s->Insert(MakeJob(id, id), &err_));
    ASSERT_TRUE(s->Finish("j1", kDone, "{}", &err_));
    ASSERT_TRUE(s->SetState("j2", kRunning, &err_));
  }  // the process "dies" here
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  std::vector<Job> pending;
  ASSERT_TRUE(s->RequeuePending(&pending, &err_)) << err_;
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending[0].id, "j2");
  EXPECT_EQ(pending[1].id, "j3");
  EXPECT_EQ(pending[2].id, "j4");
  EXPECT_EQ(s->Get("j2", &err_)->state, kQueued);
  EXPECT_EQ(s->Get("j1", &err_)->state, kDone);
}

TEST_F(StoreTest, SchemaIsVersionedAndWal) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  EXPECT_EQ(s->SchemaVersion(&err_), kSchemaVersion);
  s.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_FALSE(JobStore::Open(path_, &err_));
  EXPECT_NE(err_.find("schema_version 99"), std::string::npos) << err_;
}

TEST_F(StoreTest, OpenFailsWithThePathInTheError) {
  EXPECT_FALSE(JobStore::Open("/nonexistent-dir/x/jobs.db", &err_));
  EXPECT_NE(err_.find("/nonexistent-dir/x/jobs.db"), std::string::npos) << err_;
}

}  // namespace
}  // namespace kz::store
