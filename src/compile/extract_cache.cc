#include "compile/extract_cache.h"

#include <filesystem>

#include "util/fs.h"
#include "util/hash.h"

namespace kz::compile {

std::string ExtractCache::Key(const std::string& candidate_source, const nlohmann::json& env) {
  auto field = [&](const char* k) {
    return env.is_object() && env.contains(k) && env[k].is_string() ? env[k].get<std::string>() : "";
  };
  util::LabelledHasher h;
  h.Add("extract_format", std::to_string(kExtractCacheVersion));
  h.Add("candidate", candidate_source);
  h.Add("torch", field("torch")).Add("cuda", field("cuda")).Add("python", field("python"));
  return h.HexDigest();
}

std::string ExtractCache::PathOf(const std::string& key) const {
  return root_ + "/extract/v" + std::to_string(kExtractCacheVersion) + "/" + key.substr(0, 2) +
         "/" + key + ".json";
}

std::optional<nlohmann::json> ExtractCache::Lookup(const std::string& key) const {
  std::string text, err;
  if (!util::ReadFile(PathOf(key), &text, &err)) return std::nullopt;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", 0) != kExtractCacheVersion ||
      !j.contains("calls") || !j["calls"].is_array())
    return std::nullopt;
  std::error_code ec;  // recently used, for the cache's LRU eviction
  std::filesystem::last_write_time(PathOf(key), std::filesystem::file_time_type::clock::now(), ec);
  return j;
}

bool ExtractCache::Store(const std::string& key, const nlohmann::json& result, std::string* err) const {
  std::string path = PathOf(key);
  if (!util::MakeDirs(std::filesystem::path(path).parent_path().string(), err)) return false;
  nlohmann::json doc = result;
  doc["format"] = kExtractCacheVersion;
  return util::WriteFileAtomic(path, doc.dump(), err);
}

}  // namespace kz::compile
