// The long-term experience library of `kz optimize` (docs/optimize.md, "Memory"): an SQLite
// database shared across runs (`--experience DB`) of optimisations that worked: (bottleneck
// signature, the parent's kernel structure, the change applied, its measured effect, the GPU).
// A record is written when a child's speedup interval clears its parent's; it is retrieved for
// a new parent by its signature (SQLite FTS5 full-text match ranked by BM25); each use is
// counted, and a use whose child is kept is a win. Records used at least `kMinUses` times
// whose win rate is below `kDemoteRate` are demoted (never retrieved again). Writes are keyed
// (run directory + candidate id), so a resumed or replayed iteration never counts twice.
// Schema 2 (issue 21) stores each record's embedding (embedding.h) beside it, labelled with
// its model and dimension; a schema-1 file is migrated in place on open (columns added, NULL).
// Retrieval fusing BM25 with embeddings is retrieval.h's. One thread at a time.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "optimize/embedding.h"

struct sqlite3;

namespace kz::optimize {

struct Experience {
  int64_t id = 0;
  std::string signature;  // space-separated keywords: the task's ops, backend, bound, kernel counts
  std::string structure;  // the parent's kernel structure, one line
  std::string change;     // what the child added (short-term memory's change summary)
  double effect = 1;      // child speedup / parent speedup
  std::string gpu;
  int uses = 0, wins = 0;
};

inline constexpr int kMinUses = 3;
inline constexpr int kExperienceSchema = 2;
inline constexpr double kDemoteRate = 0.34;

class ExperienceLibrary {
 public:
  static std::unique_ptr<ExperienceLibrary> Open(const std::string& path, std::string* err);
  ~ExperienceLibrary();

  // Adds `e` once per `key`; *id the new (or, for a seen key, the earlier) record's id.
  bool Add(const Experience& e, const std::string& key, int64_t* id, std::string* err);
  // The best `k` records matching any keyword of `query` (BM25, then effect), demoted ones left out.
  bool Retrieve(const std::string& query, size_t k, std::vector<Experience>* out, std::string* err);
  // One use of record `id`, a win or not, once per `key`.
  bool RecordUse(int64_t id, bool won, const std::string& key, std::string* err);
  bool Get(int64_t id, Experience* out, std::string* err);
  // Stores record `id`'s embedding (replacing any).
  bool SetEmbedding(int64_t id, const Embedding& e, std::string* err);
  // The vectors of the records embedded by `model`, demoted ones left out; false and *err
  // naming the record when a stored BLOB does not match its dimension.
  bool Embedded(const std::string& model, std::vector<std::pair<int64_t, std::vector<float>>>* out, std::string* err);
  // The records without an embedding by `model` (none, or another model's; `model` "": those
  // with none), demoted ones left out, by id.
  bool Unembedded(const std::string& model, std::vector<Experience>* out, std::string* err);

 private:
  explicit ExperienceLibrary(sqlite3* db) : db_(db) {}
  bool Exec(const std::string& sql, std::string* err);
  bool KeySeen(const std::string& key, int64_t* id, std::string* err);
  sqlite3* db_;
};

// A record as JSON (retrievals.jsonl, candidate records) and back (absent fields: defaults).
nlohmann::json ExperienceToJson(const Experience& e);
Experience ExperienceFromJson(const nlohmann::json& j);
// One sentence for the prompt (no use counts: a redone iteration's prompt must not change).
std::string ExperienceText(const Experience& e);

// The keywords of a task and a parent: the torch / F / nn calls of the task source (lower
// case), the backend, the parent's bound and kernel counts from its behaviour cell.
std::string SignatureOf(const std::string& task_source, const std::string& backend, const std::vector<int>& cell);

}  // namespace kz::optimize
