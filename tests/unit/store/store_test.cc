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
    j.state = JobState::kQueued;
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
  EXPECT_EQ(j->state, JobState::kQueued);
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
  ASSERT_TRUE(s->SetState("a1", JobState::kRunning, &err_)) << err_;
  EXPECT_EQ(s->Get("a1", &err_)->state, JobState::kRunning);
  ASSERT_TRUE(s->Finish("a1", JobState::kDone, R"({"status":"correct"})", &err_)) << err_;
  auto j = s->Get("a1", &err_);
  EXPECT_EQ(j->state, JobState::kDone);
  EXPECT_EQ(j->verdict_json.value_or(""), R"({"status":"correct"})");
  EXPECT_FALSE(s->SetState("missing", JobState::kRunning, &err_));
  EXPECT_FALSE(s->Finish("missing", JobState::kDone, "{}", &err_));
}

TEST_F(StoreTest, FindByKeyReturnsNewestNonFailedJob) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  EXPECT_FALSE(s->FindByKey("k1", &err_));
  ASSERT_TRUE(s->Insert(MakeJob("a1", "k1"), &err_));
  ASSERT_TRUE(s->Insert(MakeJob("b2", "k2"), &err_));
  EXPECT_EQ(s->FindByKey("k1", &err_)->id, "a1");
  ASSERT_TRUE(s->Finish("a1", JobState::kFailed, R"({"error":"x"})", &err_));
  EXPECT_FALSE(s->FindByKey("k1", &err_)) << "a failed job is retried, not reused";
  ASSERT_TRUE(s->Insert(MakeJob("c3", "k1"), &err_));
  EXPECT_EQ(s->FindByKey("k1", &err_)->id, "c3");
}

TEST_F(StoreTest, RestartRequeuesQueuedAndRunningInSubmissionOrder) {
  {
    auto s = JobStore::Open(path_, &err_);
    ASSERT_TRUE(s) << err_;
    for (auto id : {"j1", "j2", "j3", "j4"}) ASSERT_TRUE(s->Insert(MakeJob(id, id), &err_));
    ASSERT_TRUE(s->Finish("j1", JobState::kDone, "{}", &err_));
    ASSERT_TRUE(s->SetState("j2", JobState::kRunning, &err_));
  }  // the process "dies" here
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  std::vector<Job> pending;
  ASSERT_TRUE(s->RequeuePending(&pending, &err_)) << err_;
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending[0].id, "j2");
  EXPECT_EQ(pending[1].id, "j3");
  EXPECT_EQ(pending[2].id, "j4");
  EXPECT_EQ(s->Get("j2", &err_)->state, JobState::kQueued);
  EXPECT_EQ(s->Get("j1", &err_)->state, JobState::kDone);
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

TEST_F(StoreTest, PriorityAndClientRoundTripWithDefaults) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  Job j = MakeJob("p1", "k1");
  j.priority = 7;
  j.client = "rl-trainer";
  ASSERT_TRUE(s->Insert(j, &err_)) << err_;
  ASSERT_TRUE(s->Insert(MakeJob("p2", "k2"), &err_)) << err_;
  EXPECT_EQ(s->Get("p1", &err_)->priority, 7);
  EXPECT_EQ(s->Get("p1", &err_)->client, "rl-trainer");
  EXPECT_EQ(s->Get("p2", &err_)->priority, 0);
  EXPECT_EQ(s->Get("p2", &err_)->client, "anonymous");
  std::vector<Job> pending;
  ASSERT_TRUE(s->RequeuePending(&pending, &err_)) << err_;
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0].priority, 7);
  EXPECT_EQ(pending[0].client, "rl-trainer");
}

TEST_F(StoreTest, MarkRunningStampsStartOnlyFromQueued) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  ASSERT_TRUE(s->Insert(MakeJob("a1", "k1"), &err_));
  EXPECT_FALSE(s->Get("a1", &err_)->started_at_ms);
  bool changed = false;
  ASSERT_TRUE(s->MarkRunning("a1", &changed, &err_)) << err_;
  EXPECT_TRUE(changed);
  auto j = s->Get("a1", &err_);
  EXPECT_EQ(j->state, JobState::kRunning);
  ASSERT_TRUE(j->started_at_ms);
  EXPECT_GT(*j->started_at_ms, 1700000000000);
  ASSERT_TRUE(s->MarkRunning("a1", &changed, &err_));
  EXPECT_FALSE(changed) << "a running job is not started twice";
  ASSERT_TRUE(s->Finish("a1", JobState::kDone, "{}", &err_)) << err_;
  EXPECT_TRUE(s->Get("a1", &err_)->finished_at_ms);
}

TEST_F(StoreTest, CancelQueuedAndRunningButNotFinal) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  for (auto id : {"q", "r", "d"}) ASSERT_TRUE(s->Insert(MakeJob(id, id), &err_));
  bool changed = false;
  ASSERT_TRUE(s->MarkRunning("r", &changed, &err_));
  ASSERT_TRUE(s->Finish("d", JobState::kDone, R"({"status":"correct"})", &err_));
  ASSERT_TRUE(s->Cancel("q", R"({"cancelled_while":"queued"})", &changed, &err_)) << err_;
  EXPECT_TRUE(changed);
  ASSERT_TRUE(s->Cancel("r", R"({"cancelled_while":"running"})", &changed, &err_));
  EXPECT_TRUE(changed);
  ASSERT_TRUE(s->Cancel("d", "{}", &changed, &err_));
  EXPECT_FALSE(changed) << "a done job stays done";
  ASSERT_TRUE(s->Cancel("nope", "{}", &changed, &err_));
  EXPECT_FALSE(changed);
  auto q = s->Get("q", &err_);
  EXPECT_EQ(q->state, JobState::kCancelled);
  EXPECT_TRUE(q->finished_at_ms);
  EXPECT_EQ(q->verdict_json.value_or(""), R"({"cancelled_while":"queued"})");
  EXPECT_EQ(s->Get("d", &err_)->state, JobState::kDone);
  // A cancelled job is final: MarkRunning and Finish leave it cancelled.
  ASSERT_TRUE(s->MarkRunning("q", &changed, &err_));
  EXPECT_FALSE(changed);
  EXPECT_FALSE(s->Finish("r", JobState::kDone, "{}", &err_));
  EXPECT_EQ(s->Get("r", &err_)->state, JobState::kCancelled);
  // Not a deduplication target.
  err_.clear();
  EXPECT_FALSE(s->FindByKey("q", &err_));
  EXPECT_TRUE(err_.empty()) << err_;
  std::vector<std::pair<std::string, int64_t>> counts;
  ASSERT_TRUE(s->CountByState(&counts, &err_)) << err_;
  ASSERT_EQ(counts.size(), 5u);
  for (const auto& [state, n] : counts) EXPECT_EQ(n, state == "cancelled" ? 2 : state == "done" ? 1 : 0) << state;
}

TEST_F(StoreTest, CancelledJobsStayCancelledAcrossRestart) {
  {
    auto s = JobStore::Open(path_, &err_);
    ASSERT_TRUE(s) << err_;
    for (auto id : {"j1", "j2", "j3"}) ASSERT_TRUE(s->Insert(MakeJob(id, id), &err_));
    bool changed = false;
    ASSERT_TRUE(s->Cancel("j2", "{}", &changed, &err_));
    ASSERT_TRUE(s->MarkRunning("j3", &changed, &err_));
    ASSERT_TRUE(s->Cancel("j3", "{}", &changed, &err_));
  }
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  std::vector<Job> pending;
  ASSERT_TRUE(s->RequeuePending(&pending, &err_)) << err_;
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].id, "j1");
  EXPECT_EQ(s->Get("j3", &err_)->state, JobState::kCancelled);
}

TEST_F(StoreTest, InsertAllIsAllOrNothing) {
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  ASSERT_TRUE(s->InsertAll({MakeJob("b1", "k1"), MakeJob("b2", "k2")}, &err_)) << err_;
  EXPECT_TRUE(s->Get("b2", &err_));
  // The second collides with b1: nothing of this batch is stored.
  EXPECT_FALSE(s->InsertAll({MakeJob("b3", "k3"), MakeJob("b1", "k4")}, &err_));
  EXPECT_FALSE(s->Get("b3", &err_));
  ASSERT_TRUE(s->Insert(MakeJob("b5", "k5"), &err_)) << "the store works after a rollback: " << err_;
}

TEST_F(StoreTest, Version1FileIsMigrated) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const char* v1 = R"SQL(
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE jobs(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, key TEXT NOT NULL,
      state TEXT NOT NULL, submitted_at INTEGER NOT NULL, finished_at INTEGER, backend TEXT NOT NULL,
      options TEXT NOT NULL, task_hash TEXT NOT NULL, candidate_hash TEXT NOT NULL, task_source TEXT NOT NULL,
      candidate_source TEXT NOT NULL, verdict TEXT);
    INSERT INTO meta VALUES('schema_version', '1');
    INSERT INTO jobs(id, key, state, submitted_at, backend, options, task_hash, candidate_hash, task_source,
      candidate_source) VALUES('old', 'k', 'queued', 1, 'triton', '{}', 't', 'c', 'T', 'C');
  )SQL";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  EXPECT_EQ(s->SchemaVersion(&err_), 2);
  auto j = s->Get("old", &err_);
  ASSERT_TRUE(j) << err_;
  EXPECT_EQ(j->priority, 0);
  EXPECT_EQ(j->client, "anonymous");
  EXPECT_FALSE(j->started_at_ms);
  Job n = MakeJob("new", "k2");
  n.priority = 3;
  ASSERT_TRUE(s->Insert(n, &err_)) << err_;
  s.reset();
  s = JobStore::Open(path_, &err_);  // a migrated file opens as version 2
  ASSERT_TRUE(s) << err_;
  EXPECT_EQ(s->Get("new", &err_)->priority, 3);
}

TEST_F(StoreTest, StoredSpellingsAreReadAndAnUnknownStateIsAnError) {
  {
    auto s = JobStore::Open(path_, &err_);
    ASSERT_TRUE(s) << err_;
    for (auto id : {"a", "b", "c"}) ASSERT_TRUE(s->Insert(MakeJob(id, "k"), &err_)) << err_;
  }
  // Rows as another process (an older kz, or a hand edit) left them.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const char* edit = "UPDATE jobs SET state = 'done' WHERE id = 'a'; UPDATE jobs SET state = 'paused', key = 'kb' WHERE id = 'b';";
  ASSERT_EQ(sqlite3_exec(db, edit, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto s = JobStore::Open(path_, &err_);
  ASSERT_TRUE(s) << err_;
  auto a = s->Get("a", &err_);
  ASSERT_TRUE(a) << err_;
  EXPECT_EQ(a->state, JobState::kDone);
  EXPECT_FALSE(s->Get("b", &err_));
  EXPECT_EQ(err_, "job b: unknown state 'paused' in the store");
  err_.clear();
  EXPECT_FALSE(s->FindByKey("kb", &err_)) << "an error, not a guess";
  EXPECT_NE(err_.find("unknown state 'paused'"), std::string::npos) << err_;
  std::vector<std::pair<std::string, int64_t>> counts;
  err_.clear();
  EXPECT_FALSE(s->CountByState(&counts, &err_));
  EXPECT_NE(err_.find("unknown state 'paused'"), std::string::npos) << err_;
  std::vector<Job> pending;
  ASSERT_TRUE(s->RequeuePending(&pending, &err_)) << "only queued rows are read: " << err_;
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].id, "c");
}

TEST_F(StoreTest, OpenFailsWithThePathInTheError) {
  EXPECT_FALSE(JobStore::Open("/nonexistent-dir/x/jobs.db", &err_));
  EXPECT_NE(err_.find("/nonexistent-dir/x/jobs.db"), std::string::npos) << err_;
}

}  // namespace
}  // namespace kz::store
