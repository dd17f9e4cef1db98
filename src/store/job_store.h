// The results store of `kz serve`: one SQLite (WAL) file holding every accepted job.
// Thread safety: every method may be called from any thread; calls are serialised by one
// mutex around the single connection.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/job_state.h"
#include "util/thread_annotations.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kz::store {

// 2 added priority, client and started_at (a version-1 file is migrated on Open).
inline constexpr int kSchemaVersion = 2;

struct Job {
  std::string id;
  std::string key;    // deduplication key (the service's labelled hash of the inputs)
  JobState state = JobState::kQueued;
  int64_t submitted_at_ms = 0;  // Unix time, milliseconds
  std::optional<int64_t> started_at_ms, finished_at_ms;  // set by MarkRunning / Finish / Cancel
  int64_t priority = 0;         // higher runs first
  std::string client = "anonymous";  // fairness is between clients
  std::string backend;          // "cuda", "triton" or "" (detected)
  std::string options_json;     // the request's "options" object, canonical JSON
  std::string task_hash, candidate_hash;  // XXH3-128 hex of the sources
  std::string task_source, candidate_source;
  std::optional<std::string> verdict_json;  // set when done (or the error when failed)
};

class JobStore {
 public:
  // Opens (creating if needed) the store at `path`. nullptr and *err on failure,
  // including a file whose schema_version is not kSchemaVersion.
  static std::unique_ptr<JobStore> Open(const std::string& path, std::string* err);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  bool Insert(const Job& job, std::string* err);
  // Inserts every job in one transaction: all of them or none.
  bool InsertAll(const std::vector<Job>& jobs, std::string* err);
  // queued -> running, stamping started_at. *changed is false (and nothing is written)
  // when the job is not queued (cancelled meanwhile).
  bool MarkRunning(const std::string& id, bool* changed, std::string* err);
  // queued|running -> cancelled with `note_json` as its verdict column. *changed is false
  // when the job is unknown or already final.
  bool Cancel(const std::string& id, const std::string& note_json, bool* changed, std::string* err);
  // Sets the state of job `id`; false if it does not exist.
  bool SetState(const std::string& id, JobState state, std::string* err);
  // Marks job `id` done (or failed) with its verdict JSON (or error text); a job already
  // final (cancelled) is left as it is and reported as an error.
  bool Finish(const std::string& id, JobState state, const std::string& verdict_json,
              std::string* err);
  // nullopt: not found (err empty) or an error (err set; also a row whose state column is
  // not one of JobState's spellings).
  std::optional<Job> Get(const std::string& id, std::string* err);
  // The newest job with this deduplication key, in any state except failed or cancelled.
  std::optional<Job> FindByKey(const std::string& key, std::string* err);
  // For a restart: jobs left running become queued again; returns every queued job in
  // submission order.
  bool RequeuePending(std::vector<Job>* out, std::string* err);
  // Jobs per state, spelled as stored (every state of kAllJobStates present, 0 if none);
  // false with *err when the file holds a state this kz does not know.
  bool CountByState(std::vector<std::pair<std::string, int64_t>>* out, std::string* err);
  int SchemaVersion(std::string* err);

 private:
  explicit JobStore(sqlite3* db) : db_(db) {}
  bool Exec(const char* sql, std::string* err) REQUIRES(mu_);
  bool Migrate(int from_version, std::string* err) EXCLUDES(mu_);  // construction only
  bool InsertLocked(const Job& job, std::string* err) REQUIRES(mu_);
  std::optional<Job> SelectOne(const std::string& sql, const std::string& arg, std::string* err) EXCLUDES(mu_);
  // The statement for `sql`, prepared once and kept; nullptr on a prepare error
  // (sqlite3_errmsg tells). Use it through a borrowing Stmt, which resets it.
  sqlite3_stmt* Prepared(const std::string& sql) REQUIRES(mu_);

  util::Mutex mu_;
  sqlite3* db_ GUARDED_BY(mu_);
  std::map<std::string, sqlite3_stmt*> prepared_ GUARDED_BY(mu_);
};

}  // namespace kz::store
