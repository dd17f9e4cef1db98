#include "curriculum/frontier_pool.h"

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "curriculum/catalog.h"
#include "curriculum/validate_rules.h"

namespace kz::curriculum {
namespace {

constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS recorded(key TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS modules(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  hash TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  api_set TEXT NOT NULL,
  source TEXT NOT NULL,
  round INTEGER NOT NULL,
  added_at INTEGER NOT NULL,
  catalog_version INTEGER NOT NULL DEFAULT 1,
  status TEXT NOT NULL DEFAULT 'untested');
CREATE TABLE IF NOT EXISTS attempts(
  module_id INTEGER NOT NULL REFERENCES modules(id),
  round INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  successes INTEGER NOT NULL,
  PRIMARY KEY(module_id, round));
INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '2');
)SQL";

// Version 1 had neither the catalog version nor the status column.
constexpr const char* kMigrate1To2 = R"SQL(
BEGIN IMMEDIATE;
ALTER TABLE modules ADD COLUMN catalog_version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE modules ADD COLUMN status TEXT NOT NULL DEFAULT 'untested';
UPDATE modules SET status = (SELECT CASE WHEN SUM(a.attempts) IS NULL OR SUM(a.attempts) = 0 THEN 'untested'
  WHEN SUM(a.successes) = 0 THEN 'unsolved' WHEN SUM(a.successes) = SUM(a.attempts) THEN 'mastered'
  ELSE 'frontier' END FROM attempts a WHERE a.module_id = modules.id);
UPDATE meta SET value = '2' WHERE key = 'schema_version';
COMMIT;
)SQL";

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK; }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return ok_; }
  Stmt& Bind(int i, const std::string& v) { return sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT), *this; }
  Stmt& Bind(int i, int64_t v) { return sqlite3_bind_int64(s_, i, v), *this; }
  int Step() { return sqlite3_step(s_); }
  int64_t Int(int c) { return sqlite3_column_int64(s_, c); }
  std::string Text(int c) {
    auto* t = sqlite3_column_text(s_, c);
    return t ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
};

std::string Error(sqlite3* db) { return sqlite3_errmsg(db); }
}  // namespace

std::string PoolStatus(int attempts, int successes) {
  if (attempts <= 0) return "untested";
  if (successes == 0) return "unsolved";
  return successes >= attempts ? "mastered" : "frontier";
}

std::unique_ptr<FrontierPool> FrontierPool::Open(const std::string& path, std::string* err) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    *err = path + ": " + (db ? Error(db) : "cannot open");
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<FrontierPool> pool(new FrontierPool(db));
  bool existing = false;
  {
    Stmt s(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'modules'");
    existing = s.ok() && s.Step() == SQLITE_ROW;
  }
  int version = existing ? pool->SchemaVersion(err) : kPoolSchemaVersion;
  if (version == 1 && !pool->Migrate1To2(err)) return *err = path + ": migrating from schema 1: " + *err, nullptr;
  if (version != 1 && version != kPoolSchemaVersion)
    return *err = path + ": frontier pool schema " + std::to_string(version) + ", this kz reads " +
                  std::to_string(kPoolSchemaVersion) + " (and migrates 1)", nullptr;
  if (!pool->Exec(kSchema, err)) return *err = path + ": " + *err, nullptr;
  return pool;
}

FrontierPool::~FrontierPool() { sqlite3_close(db_); }

bool FrontierPool::Exec(const char* sql, std::string* err) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return true;
  *err = msg ? msg : "sqlite error";
  sqlite3_free(msg);
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return false;
}

bool FrontierPool::Migrate1To2(std::string* err) { return Exec(kMigrate1To2, err); }

int FrontierPool::SchemaVersion(std::string* err) {
  Stmt s(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!s.ok() || s.Step() != SQLITE_ROW) return *err = "no schema_version in meta", -1;
  return std::stoi(s.Text(0));
}

bool FrontierPool::Add(const PoolModule& m, int64_t* id, bool* inserted, std::string* err) {
  Stmt s(db_, "INSERT OR IGNORE INTO modules(hash, name, api_set, source, round, added_at, catalog_version) "
              "VALUES(?, ?, ?, ?, ?, CAST(strftime('%s','now') AS INTEGER), ?)");
  s.Bind(1, m.hash).Bind(2, m.name).Bind(3, nlohmann::json(m.api_set).dump()).Bind(4, m.source);
  s.Bind(5, int64_t{m.round}).Bind(6, int64_t{m.catalog_version});
  if (!s.ok() || s.Step() != SQLITE_DONE) return *err = Error(db_), false;
  *inserted = sqlite3_changes(db_) == 1;
  Stmt q(db_, "SELECT id FROM modules WHERE hash = ?");
  q.Bind(1, m.hash);
  if (q.Step() != SQLITE_ROW) return *err = Error(db_), false;
  *id = q.Int(0);
  return true;
}

bool FrontierPool::RecordAttempts(int64_t id, int round, int attempts, int successes, std::string* err) {
  if (attempts < 0 || successes < 0 || successes > attempts)
    return *err = "attempts/successes out of range", false;
  Stmt s(db_, "INSERT INTO attempts(module_id, round, attempts, successes) VALUES(?, ?, ?, ?) "
              "ON CONFLICT(module_id, round) DO UPDATE SET attempts = attempts + excluded.attempts, "
              "successes = successes + excluded.successes");
  s.Bind(1, id).Bind(2, int64_t{round}).Bind(3, int64_t{attempts}).Bind(4, int64_t{successes});
  if (!s.ok() || s.Step() != SQLITE_DONE) return *err = Error(db_), false;
  Stmt t(db_, "SELECT COALESCE(SUM(attempts), 0), COALESCE(SUM(successes), 0) FROM attempts WHERE module_id = ?");
  t.Bind(1, id);
  if (t.Step() != SQLITE_ROW) return *err = Error(db_), false;
  Stmt u(db_, "UPDATE modules SET status = ? WHERE id = ?");
  u.Bind(1, PoolStatus(static_cast<int>(t.Int(0)), static_cast<int>(t.Int(1)))).Bind(2, id);
  if (u.Step() != SQLITE_DONE || sqlite3_changes(db_) != 1) return *err = "no module with id " + std::to_string(id), false;
  return true;
}

bool FrontierPool::RecordAttemptsOnce(const std::string& key, int64_t id, int round, int attempts, int successes,
                                      bool* already, std::string* err) {
  *already = false;
  if (!Exec("BEGIN IMMEDIATE", err)) return false;
  Stmt k(db_, "INSERT OR IGNORE INTO recorded(key) VALUES(?)");
  k.Bind(1, key);
  bool ok = k.ok() && k.Step() == SQLITE_DONE;
  if (!ok) *err = Error(db_);
  else if (sqlite3_changes(db_) == 0) *already = true;
  else ok = RecordAttempts(id, round, attempts, successes, err);
  std::string ignored;
  if (!ok) return Exec("ROLLBACK", &ignored), false;
  return Exec("COMMIT", err);
}

bool FrontierPool::List(std::vector<PoolEntry>* out, std::string* err) {
  out->clear();
  Stmt s(db_, "SELECT m.id, m.hash, m.name, m.api_set, m.catalog_version, m.source, m.round, m.status, "
              "COALESCE(SUM(a.attempts), 0), COALESCE(SUM(a.successes), 0) FROM modules m "
              "LEFT JOIN attempts a ON a.module_id = m.id GROUP BY m.id ORDER BY m.id");
  if (!s.ok()) return *err = Error(db_), false;
  while (s.Step() == SQLITE_ROW) {
    PoolEntry e;
    e.id = s.Int(0);
    e.module = {s.Text(1), s.Text(2), nlohmann::json::parse(s.Text(3), nullptr, false).get<std::vector<std::string>>(),
                static_cast<int>(s.Int(4)), s.Text(5), static_cast<int>(s.Int(6))};
    e.status = s.Text(7);
    e.attempts = static_cast<int>(s.Int(8));
    e.successes = static_cast<int>(s.Int(9));
    if (e.attempts > 0) e.p_hat = static_cast<double>(e.successes) / e.attempts;
    out->push_back(std::move(e));
  }
  return true;
}

bool FrontierPool::Contains(const std::string& hash, std::string* err, bool* found) {
  Stmt s(db_, "SELECT 1 FROM modules WHERE hash = ?");
  if (!s.ok()) return *err = Error(db_), false;
  s.Bind(1, hash);
  *found = s.Step() == SQLITE_ROW;
  return true;
}

bool FrontierPool::FailedSets(std::vector<std::vector<std::string>>* out, std::string* err) {
  out->clear();
  Stmt s(db_, "SELECT api_set FROM modules WHERE status = 'unsolved' ORDER BY id");
  if (!s.ok()) return *err = Error(db_), false;
  while (s.Step() == SQLITE_ROW)
    out->push_back(nlohmann::json::parse(s.Text(0), nullptr, false).get<std::vector<std::string>>());
  return true;
}

bool FrontierIndexSets(FrontierPool& pool, const Catalog& catalog, std::vector<std::vector<size_t>>* out,
                       std::string* err) {
  std::vector<std::vector<std::string>> named;
  if (!pool.FailedSets(&named, err)) return false;
  out->clear();
  for (const auto& n : named) {
    std::vector<size_t> s;
    std::string why;
    if (ParseApiSet(catalog, n, &s, &why)) out->push_back(std::move(s));
  }
  return true;
}

bool AddPoolHashes(FrontierPool& pool, KnownHashes* known, std::string* err) {
  std::vector<PoolEntry> entries;
  if (!pool.List(&entries, err)) return false;
  for (const auto& e : entries) known->seen.emplace(e.module.hash, "frontier pool module " + std::to_string(e.id));
  return true;
}

}  // namespace kz::curriculum
