#include "store/job_store.h"

#include <sqlite3.h>

#include <algorithm>

namespace kz::store {
namespace {

constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  submitted_at INTEGER NOT NULL,
  finished_at INTEGER,
  backend TEXT NOT NULL,
  options TEXT NOT NULL,
  task_hash TEXT NOT NULL,
  candidate_hash TEXT NOT NULL,
  task_source TEXT NOT NULL,
  candidate_source TEXT NOT NULL,
  verdict TEXT,
  priority INTEGER NOT NULL DEFAULT 0,
  client TEXT NOT NULL DEFAULT 'anonymous',
  started_at INTEGER);
CREATE INDEX IF NOT EXISTS jobs_by_key ON jobs(key);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state);
INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '2');
)SQL";

// Version 1 -> 2: the columns of priorities and fairness, with their defaults.
constexpr const char* kMigrate1To2 = R"SQL(
BEGIN IMMEDIATE;
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN client TEXT NOT NULL DEFAULT 'anonymous';
ALTER TABLE jobs ADD COLUMN started_at INTEGER;
UPDATE meta SET value = '2' WHERE key = 'schema_version';
COMMIT;
)SQL";

#define KZ_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

constexpr const char* kColumns =
    "SELECT id, key, state, submitted_at, backend, options, task_hash, candidate_hash, "
    "task_source, candidate_source, verdict, finished_at, priority, client, started_at FROM jobs ";

// A statement prepared for one use, or (the second constructor) one borrowed from the
// store's cache of prepared statements, reset and unbound again when this goes out of scope.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { ok_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) == SQLITE_OK; }
  explicit Stmt(sqlite3_stmt* cached) : s_(cached), ok_(cached != nullptr), owned_(false) {}
  ~Stmt() {
    if (owned_) {
      sqlite3_finalize(s_);
    } else if (s_) {
      sqlite3_reset(s_);
      sqlite3_clear_bindings(s_);
    }
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return ok_; }
  void Bind(int i, std::string_view v) { sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  int Step() { return sqlite3_step(s_); }
  std::string Text(int i) const {
    auto* p = sqlite3_column_text(s_, i);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(s_, i)) : "";
  }
  bool IsNull(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }
  int64_t Int(int i) const { return sqlite3_column_int64(s_, i); }

 private:
  sqlite3_stmt* s_ = nullptr;
  bool ok_ = false;
  bool owned_ = true;
};

bool Fail(sqlite3* db, std::string* err) {
  *err = std::string("sqlite: ") + sqlite3_errmsg(db);
  return false;
}

// The row `s` is on, as a Job; false with *err when its state column is not one this kz
// knows (a newer kz's file, or a tampered one).
bool ReadJob(const Stmt& s, Job* out, std::string* err) {
  Job j;
  j.id = s.Text(0);
  j.key = s.Text(1);
  std::string state = s.Text(2);
  std::optional<JobState> parsed = ParseJobState(state);
  if (!parsed) return *err = "job " + j.id + ": unknown state '" + state + "' in the store", false;
  j.state = *parsed;
  j.submitted_at_ms = s.Int(3);
  j.backend = s.Text(4);
  j.options_json = s.Text(5);
  j.task_hash = s.Text(6);
  j.candidate_hash = s.Text(7);
  j.task_source = s.Text(8);
  j.candidate_source = s.Text(9);
  if (!s.IsNull(10)) j.verdict_json = s.Text(10);
  if (!s.IsNull(11)) j.finished_at_ms = s.Int(11);
  j.priority = s.Int(12);
  j.client = s.Text(13);
  if (!s.IsNull(14)) j.started_at_ms = s.Int(14);
  *out = std::move(j);
  return true;
}

}  // namespace

std::unique_ptr<JobStore> JobStore::Open(const std::string& path, std::string* err) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    *err = path + ": " + (db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return nullptr;
  }
  std::unique_ptr<JobStore> store(new JobStore(db));
  sqlite3_busy_timeout(db, 5000);
  bool ok;
  {
    util::MutexLock lock(store->mu_);  // not shared yet; the lock keeps the analysis simple
    ok = store->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err) && store->Exec(kSchema, err);
  }
  if (!ok) return *err = path + ": " + *err, nullptr;
  int version = store->SchemaVersion(err);
  if (version == 1) {
    if (!store->Migrate(version, err)) return *err = path + ": migrating from schema 1: " + *err, nullptr;
    version = store->SchemaVersion(err);
  }
  if (version != kSchemaVersion) {
    if (version >= 0) *err = path + ": schema_version " + std::to_string(version) +
                             ", this kz reads " + std::to_string(kSchemaVersion);
    return nullptr;
  }
  return store;
}

JobStore::~JobStore() {
  for (auto& [sql, stmt] : prepared_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

sqlite3_stmt* JobStore::Prepared(const std::string& sql) {
  auto it = prepared_.find(sql);
  if (it != prepared_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) return nullptr;
  prepared_.emplace(sql, stmt);
  return stmt;
}

bool JobStore::Exec(const char* sql, std::string* err) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return true;
  *err = std::string("sqlite: ") + (msg ? msg : "error");
  sqlite3_free(msg);
  return false;
}

bool JobStore::Migrate(int from_version, std::string* err) {
  util::MutexLock lock(mu_);
  if (from_version != 1) return *err = "no migration from schema " + std::to_string(from_version), false;
  if (Exec(kMigrate1To2, err)) return true;
  std::string ignored;
  Exec("ROLLBACK", &ignored);
  return false;
}

int JobStore::SchemaVersion(std::string* err) {
  util::MutexLock lock(mu_);
  Stmt s(db_, "SELECT value FROM meta WHERE key = 'schema_version'");
  if (!s.ok()) return Fail(db_, err), -1;
  if (s.Step() != SQLITE_ROW) return *err = "no schema_version in meta", -1;
  return std::stoi(s.Text(0));
}

bool JobStore::Insert(const Job& job, std::string* err) {
  util::MutexLock lock(mu_);
  return InsertLocked(job, err);
}

bool JobStore::InsertAll(const std::vector<Job>& jobs, std::string* err) {
  util::MutexLock lock(mu_);
  if (!Exec("BEGIN IMMEDIATE", err)) return false;
  for (const Job& j : jobs) {
    if (InsertLocked(j, err)) continue;
    std::string ignored;
    Exec("ROLLBACK", &ignored);
    return false;
  }
  return Exec("COMMIT", err);
}

bool JobStore::InsertLocked(const Job& job, std::string* err) {
  Stmt s(Prepared("INSERT INTO jobs(id, key, state, submitted_at, backend, options, task_hash, "
                  "candidate_hash, task_source, candidate_source, verdict, priority, client) "
                  "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  if (!s.ok()) return Fail(db_, err);
  s.Bind(1, job.id);
  s.Bind(2, job.key);
  s.Bind(3, ToString(job.state));
  s.Bind(4, job.submitted_at_ms);
  s.Bind(5, job.backend);
  s.Bind(6, job.options_json);
  s.Bind(7, job.task_hash);
  s.Bind(8, job.candidate_hash);
  s.Bind(9, job.task_source);
  s.Bind(10, job.candidate_source);
  if (job.verdict_json) s.Bind(11, *job.verdict_json);
  s.Bind(12, job.priority);
  s.Bind(13, job.client);
  return s.Step() == SQLITE_DONE || Fail(db_, err);
}

bool JobStore::MarkRunning(const std::string& id, bool* changed, std::string* err) {
  util::MutexLock lock(mu_);
  Stmt s(db_, "UPDATE jobs SET state = 'running', started_at = " KZ_NOW_MS " WHERE id = ? AND state = 'queued'");
  if (!s.ok()) return Fail(db_, err);
  s.Bind(1, id);
  if (s.Step() != SQLITE_DONE) return Fail(db_, err);
  *changed = sqlite3_changes(db_) > 0;
  return true;
}

bool JobStore::Cancel(const std::string& id, const std::string& note_json, bool* changed, std::string* err) {
  util::MutexLock lock(mu_);
  Stmt s(db_, "UPDATE jobs SET state = 'cancelled', verdict = ?, finished_at = " KZ_NOW_MS
              " WHERE id = ? AND state IN ('queued', 'running')");
  if (!s.ok()) return Fail(db_, err);
  s.Bind(1, note_json);
  s.Bind(2, id);
  if (s.Step() != SQLITE_DONE) return Fail(db_, err);
  *changed = sqlite3_changes(db_) > 0;
  return true;
}

bool JobStore::CountByState(std::vector<std::pair<std::string, int64_t>>* out, std::string* err) {
  util::MutexLock lock(mu_);
  out->clear();
  for (JobState st : kAllJobStates) out->emplace_back(ToString(st), 0);
  Stmt s(db_, "SELECT state, COUNT(*) FROM jobs GROUP BY state");
  if (!s.ok()) return Fail(db_, err);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    std::string state = s.Text(0);
    auto it = std::find_if(out->begin(), out->end(), [&](const auto& p) { return p.first == state; });
    if (it == out->end()) return *err = "unknown state '" + state + "' in the store", false;
    it->second = s.Int(1);
  }
  return rc == SQLITE_DONE || Fail(db_, err);
}

bool JobStore::SetState(const std::string& id, JobState state, std::string* err) {
  util::MutexLock lock(mu_);
  Stmt s(db_, "UPDATE jobs SET state = ? WHERE id = ?");
  if (!s.ok()) return Fail(db_, err);
  s.Bind(1, ToString(state));
  s.Bind(2, id);
  if (s.Step() != SQLITE_DONE) return Fail(db_, err);
  if (sqlite3_changes(db_) == 0) return *err = "no job " + id, false;
  return true;
}

bool JobStore::Finish(const std::string& id, JobState state, const std::string& verdict_json,
                      std::string* err) {
  util::MutexLock lock(mu_);
  Stmt s(db_, "UPDATE jobs SET state = ?, verdict = ?, finished_at = " KZ_NOW_MS
              " WHERE id = ? AND state IN ('queued', 'running')");
  if (!s.ok()) return Fail(db_, err);
  s.Bind(1, ToString(state));
  s.Bind(2, verdict_json);
  s.Bind(3, id);
  if (s.Step() != SQLITE_DONE) return Fail(db_, err);
  if (sqlite3_changes(db_) == 0) return *err = "no unfinished job " + id, false;
  return true;
}

std::optional<Job> JobStore::SelectOne(const std::string& sql, const std::string& arg, std::string* err) {
  util::MutexLock lock(mu_);
  Stmt s(Prepared(sql));
  if (!s.ok()) return Fail(db_, err), std::nullopt;
  s.Bind(1, arg);
  int rc = s.Step();
  Job job;
  if (rc == SQLITE_ROW) return ReadJob(s, &job, err) ? std::optional<Job>(std::move(job)) : std::nullopt;
  if (rc != SQLITE_DONE) Fail(db_, err);
  return std::nullopt;
}

std::optional<Job> JobStore::Get(const std::string& id, std::string* err) {
  return SelectOne(std::string(kColumns) + "WHERE id = ?", id, err);
}

std::optional<Job> JobStore::FindByKey(const std::string& key, std::string* err) {
  return SelectOne(std::string(kColumns) + "WHERE key = ? AND state NOT IN ('failed', 'cancelled') ORDER BY seq DESC LIMIT 1",
                   key, err);
}

bool JobStore::RequeuePending(std::vector<Job>* out, std::string* err) {
  util::MutexLock lock(mu_);
  if (!Exec("UPDATE jobs SET state = 'queued' WHERE state = 'running'", err)) return false;
  Stmt s(db_, (std::string(kColumns) + "WHERE state = 'queued' ORDER BY seq").c_str());
  if (!s.ok()) return Fail(db_, err);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    if (!ReadJob(s, &out->emplace_back(), err)) return out->pop_back(), false;
  }
  return rc == SQLITE_DONE || Fail(db_, err);
}

}  // namespace kz::store
