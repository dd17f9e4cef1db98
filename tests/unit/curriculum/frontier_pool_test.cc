#include "curriculum/frontier_pool.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "util/fs.h"

namespace kz::curriculum {
namespace {

class PoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "kz_pool_", &err);
  }
  void TearDown() override { util::RemoveAll(dir_); }
  std::string dir_;
};

PoolModule M(const std::string& hash, std::vector<std::string> apis) {
  return {hash, "m_" + hash, std::move(apis), 1, "class Model: ...", 0};
}

TEST_F(PoolTest, AddDedupAttemptsStatusAndFailedSets) {
  std::string err;
  auto pool = FrontierPool::Open(dir_ + "/f.db", &err);
  ASSERT_TRUE(pool) << err;
  int64_t a, b, again;
  bool inserted;
  ASSERT_TRUE(pool->Add(M("h1", {"relu", "conv2d"}), &a, &inserted, &err)) << err;
  EXPECT_TRUE(inserted);
  ASSERT_TRUE(pool->Add(M("h2", {"sum"}), &b, &inserted, &err));
  ASSERT_TRUE(pool->Add(M("h1", {"other"}), &again, &inserted, &err));
  EXPECT_FALSE(inserted);
  EXPECT_EQ(again, a);
  ASSERT_TRUE(pool->RecordAttempts(a, 1, 4, 0, &err)) << err;
  ASSERT_TRUE(pool->RecordAttempts(b, 1, 4, 2, &err));
  ASSERT_TRUE(pool->RecordAttempts(b, 1, 4, 2, &err));  // accumulates within a round
  ASSERT_TRUE(pool->RecordAttempts(b, 2, 2, 2, &err));
  std::vector<PoolEntry> entries;
  ASSERT_TRUE(pool->List(&entries, &err));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].status, "unsolved");
  EXPECT_EQ(*entries[0].p_hat, 0.0);
  EXPECT_EQ(entries[1].attempts, 10);
  EXPECT_EQ(entries[1].successes, 6);
  EXPECT_EQ(entries[1].status, "frontier");
  std::vector<std::vector<std::string>> failed;
  ASSERT_TRUE(pool->FailedSets(&failed, &err));
  EXPECT_EQ(failed, (std::vector<std::vector<std::string>>{{"relu", "conv2d"}}));
  EXPECT_FALSE(pool->RecordAttempts(a, 1, 1, 2, &err));
  EXPECT_FALSE(pool->RecordAttempts(999, 1, 1, 0, &err));
  bool found;
  ASSERT_TRUE(pool->Contains("h2", &err, &found));
  EXPECT_TRUE(found);
}

// A caller killed between recording and noting it replays: keyed recording counts once,
// and a bad count rolls the key back with it.
TEST_F(PoolTest, RecordAttemptsOnceCountsAKeyOnce) {
  std::string err;
  auto pool = FrontierPool::Open(dir_ + "/once.db", &err);
  ASSERT_TRUE(pool) << err;
  int64_t a;
  bool inserted, already;
  ASSERT_TRUE(pool->Add(M("h1", {"relu"}), &a, &inserted, &err)) << err;
  ASSERT_TRUE(pool->RecordAttemptsOnce("r1.proposer.1/m", a, 1, 2, 1, &already, &err)) << err;
  EXPECT_FALSE(already);
  ASSERT_TRUE(pool->RecordAttemptsOnce("r1.proposer.1/m", a, 1, 2, 1, &already, &err)) << err;
  EXPECT_TRUE(already);
  EXPECT_FALSE(pool->RecordAttemptsOnce("r1.proposer.2/m", a, 1, 1, 5, &already, &err)) << "successes > attempts";
  ASSERT_TRUE(pool->RecordAttemptsOnce("r1.proposer.2/m", a, 1, 1, 1, &already, &err)) << "rolled back: " << err;
  EXPECT_FALSE(already);
  std::vector<PoolEntry> all;
  ASSERT_TRUE(pool->List(&all, &err));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].attempts, 3);
  EXPECT_EQ(all[0].successes, 2);
}

TEST(PoolStatus, Rules) {
  EXPECT_EQ(PoolStatus(0, 0), "untested");
  EXPECT_EQ(PoolStatus(3, 0), "unsolved");
  EXPECT_EQ(PoolStatus(3, 1), "frontier");
  EXPECT_EQ(PoolStatus(3, 3), "mastered");
}

// A version-1 database (no catalog_version, no status) is migrated, statuses recomputed.
TEST_F(PoolTest, MigratesSchemaOne) {
  std::string path = dir_ + "/old.db";
  sqlite3* db;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, R"SQL(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE modules(id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
  api_set TEXT NOT NULL, source TEXT NOT NULL, round INTEGER NOT NULL, added_at INTEGER NOT NULL);
CREATE TABLE attempts(module_id INTEGER NOT NULL, round INTEGER NOT NULL, attempts INTEGER NOT NULL,
  successes INTEGER NOT NULL, PRIMARY KEY(module_id, round));
INSERT INTO meta VALUES('schema_version', '1');
INSERT INTO modules VALUES(1, 'h1', 'a', '["relu"]', 'src', 0, 0), (2, 'h2', 'b', '["sum"]', 'src', 0, 0);
INSERT INTO attempts VALUES(1, 0, 4, 0);
)SQL", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  std::string err;
  auto pool = FrontierPool::Open(path, &err);
  ASSERT_TRUE(pool) << err;
  EXPECT_EQ(pool->SchemaVersion(&err), 2);
  std::vector<PoolEntry> entries;
  ASSERT_TRUE(pool->List(&entries, &err));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].status, "unsolved");
  EXPECT_EQ(entries[0].module.catalog_version, 1);
  EXPECT_EQ(entries[1].status, "untested");
}

TEST_F(PoolTest, NewerSchemaIsRefused) {
  std::string path = dir_ + "/new.db", err;
  {
    auto pool = FrontierPool::Open(path, &err);
    ASSERT_TRUE(pool);
  }
  sqlite3* db;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "UPDATE meta SET value = '9' WHERE key = 'schema_version'", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_FALSE(FrontierPool::Open(path, &err));
  EXPECT_NE(err.find("schema 9"), std::string::npos) << err;
}

}  // namespace
}  // namespace kz::curriculum
