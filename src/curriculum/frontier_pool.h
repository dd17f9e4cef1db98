// The frontier pool (docs/curriculum.md "Frontier pool"): an SQLite database of every valid
// proposed module with its API set, the Coder's attempts and successes per round, p̂ and a
// status; the API sets of modules the Coder has not solved are offered to the sampler.
// Schema version 2; a version-1 database is migrated in place when opened.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace kz::curriculum {

inline constexpr int kPoolSchemaVersion = 2;

struct PoolModule {
  std::string hash;                  // canonical AST hash (dedup key)
  std::string name;                  // file-name stem, e.g. "relu_conv2d_ab12"
  std::vector<std::string> api_set;  // catalog ids
  int catalog_version = 1;
  std::string source;
  int round = 0;                     // round it was proposed in
};

// Status from the attempts over all rounds: untested (none), unsolved (no success),
// frontier (0 < p̂ < 1), mastered (p̂ = 1).
std::string PoolStatus(int attempts, int successes);

struct PoolEntry {
  int64_t id = 0;
  PoolModule module;
  int attempts = 0, successes = 0;
  std::optional<double> p_hat;
  std::string status;
};

// One thread at a time (the connection is not shared).
class FrontierPool {
 public:
  // Opens or creates; migrates version 1; refuses another version with a message naming it.
  static std::unique_ptr<FrontierPool> Open(const std::string& path, std::string* err);
  ~FrontierPool();

  // Adds a module unless one with its hash exists (*inserted false, *id of the existing one).
  bool Add(const PoolModule& m, int64_t* id, bool* inserted, std::string* err);
  // Adds n attempts and s successes of the Coder in `round` (accumulates within a round).
  bool RecordAttempts(int64_t id, int round, int attempts, int successes, std::string* err);
  // RecordAttempts once per `key` (e.g. "<run unit>/<module>"): the key and the counts commit
  // in one transaction, so a caller killed anywhere and replayed never counts twice
  // (*already: the key was recorded before, nothing changed).
  bool RecordAttemptsOnce(const std::string& key, int64_t id, int round, int attempts, int successes, bool* already,
                          std::string* err);
  bool List(std::vector<PoolEntry>* out, std::string* err);
  bool Contains(const std::string& hash, std::string* err, bool* found);
  // API sets of unsolved modules, oldest first: what the sampler's frontier share draws.
  bool FailedSets(std::vector<std::vector<std::string>>* out, std::string* err);
  int SchemaVersion(std::string* err);

 private:
  explicit FrontierPool(sqlite3* db) : db_(db) {}
  bool Exec(const char* sql, std::string* err);
  bool Migrate1To2(std::string* err);
  sqlite3* db_;
};

class Catalog;
struct KnownHashes;
// The pool's modules as seen hashes (their duplicates are refused by validation).
bool AddPoolHashes(FrontierPool& pool, KnownHashes* known, std::string* err);
// The pool's failed API sets as catalog indices (sets naming an API the catalog lacks are
// skipped): what the sampler's frontier share draws from.
bool FrontierIndexSets(FrontierPool& pool, const Catalog& catalog, std::vector<std::vector<size_t>>* out,
                       std::string* err);

}  // namespace kz::curriculum
