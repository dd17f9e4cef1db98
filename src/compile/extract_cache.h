// Cache of extraction results: a candidate file's load_inline calls, keyed by its content
// and the environment, so a resubmitted candidate needs no Python process before its
// libraries are found (a cache hit costs two file reads).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::compile {

// 2: calls carry "candidate_file" and "source_lines" (diagnostics mapped to the candidate).
inline constexpr int kExtractCacheVersion = 2;

class ExtractCache {
 public:
  explicit ExtractCache(std::string root) : root_(std::move(root)) {}

  // Labelled hash of the format, the candidate's bytes and the environment probe.
  static std::string Key(const std::string& candidate_source, const nlohmann::json& env);

  // {"calls": [...], "env": {...}} stored for `key`, or nullopt.
  std::optional<nlohmann::json> Lookup(const std::string& key) const;

  // Stores atomically; a failure only costs a later re-extraction.
  bool Store(const std::string& key, const nlohmann::json& result, std::string* err) const;

 private:
  std::string PathOf(const std::string& key) const;
  std::string root_;
};

}  // namespace kz::compile
