// Co-occurrence statistics of catalog APIs over a corpus of Torch modules (docs/curriculum.md
// "Statistics format"): how many modules use each API and each pair, with the corpus hash
// and the catalog version they were counted against.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "curriculum/catalog.h"
#include "curriculum/scan.h"

namespace kz::curriculum {

inline constexpr const char* kStatsFormat = "kz.cooccur";
inline constexpr int kStatsVersion = 1;

struct CorpusFile {
  std::string rel, abs;
};

struct ModuleApis {
  std::string path;          // relative to its corpus root
  std::vector<size_t> apis;  // sorted catalog indices
};

struct Stats {
  int catalog_version = 0;
  std::vector<std::string> roots;          // corpus directories as given
  std::string corpus_hash;                 // over (relative path, content hash) of every file
  size_t files = 0, modules = 0;           // files seen; modules counted (parsed, with Model)
  std::map<std::string, size_t> skipped;   // reason (not_utf8, syntax_error, no_model, ...) -> files
  std::vector<uint32_t> count;             // per API: modules that use it
  std::vector<uint32_t> pair;              // n x n, symmetric, diagonal = count
  std::vector<ModuleApis> per_module;
  bool with_operators = false;

  size_t n() const { return count.size(); }
  uint32_t Pair(size_t a, size_t b) const { return pair[a * n() + b]; }
};

// The .py files under each root (recursive, sorted; hidden directories skipped). False
// when a root is not a readable directory.
bool ListCorpus(const std::vector<std::string>& roots, std::vector<CorpusFile>* out, std::string* err);

// Hash of the corpus content: labelled (relative path, xxh128 of the bytes) per file.
bool CorpusHash(const std::vector<CorpusFile>& files, std::string* out, std::string* err);

// Adds one module's API set to the counts (a module counts once per API and per pair).
void CountModule(Stats* stats, const std::string& rel, const std::vector<size_t>& apis);

// Mines the corpus: lists, hashes, scans (Scanner), resolves and counts. Files the scan
// could not read or parse, and files without a Model class, are skipped and counted.
bool Mine(const std::vector<std::string>& roots, const Catalog& catalog, Scanner& scanner, bool with_operators,
          Stats* out, std::string* err);

nlohmann::json StatsToJson(const Stats& s, const Catalog& catalog);
// Errors: another format or version, statistics of another catalog version, an API the
// catalog does not have.
bool StatsFromJson(const nlohmann::json& doc, const Catalog& catalog, Stats* out, std::string* err);
bool SaveStats(const std::string& path, const Stats& s, const Catalog& catalog, std::string* err);
bool LoadStats(const std::string& path, const Catalog& catalog, Stats* out, std::string* err);

}  // namespace kz::curriculum
