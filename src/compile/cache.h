// Content-addressed cache of built extensions. Safe for several processes at once: entries
// are published by an atomic rename and never modified afterwards.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::compile {

inline constexpr int kCacheFormatVersion = 1;

// Everything outside the call itself that changes the built library.
struct BuildEnv {
  std::string torch;       // torch.__version__
  std::string cuda;        // torch.version.cuda
  std::string python;      // major.minor.patch
  std::string arch_list;   // TORCH_CUDA_ARCH_LIST, e.g. "9.0"
};

class ExtensionCache {
 public:
  explicit ExtensionCache(std::string root) : root_(std::move(root)) {}

  // Labelled hash of the cache format, the build op version, every load_inline argument
  // and the BuildEnv.
  static std::string Key(const nlohmann::json& call, const BuildEnv& env);

  // A complete entry of this format: a built library, or a cached compile error (the
  // same sources fail the same way, so resubmissions do not recompile).
  struct Entry {
    bool ok = false;
    std::string library;      // when ok
    std::string diagnostics;  // when !ok
  };
  std::optional<Entry> Lookup(const std::string& key, const std::string& name) const;

  // A fresh private staging directory under <root>/tmp. "" and *err on failure.
  std::string NewStagingDir(std::string* err) const;

  // Publishes a staging directory holding <name>.so (or, when meta["ok"] is false, a
  // compile error in meta["diagnostics"]) as the entry for `key`. If another process
  // published the same key first, its entry wins and ours is removed. On success *library
  // is the published library path ("" for an error entry).
  bool Publish(const std::string& staging, const std::string& key, const std::string& name,
               const nlohmann::json& meta, std::string* library, std::string* err) const;

  // Marks an entry as just used (its meta.json mtime), for LRU eviction.
  void Touch(const std::string& key) const;

  struct EvictionReport {
    uint64_t bytes_before = 0, bytes_after = 0;
    int entries_removed = 0, staging_removed = 0, extract_removed = 0, pch_removed = 0;
  };
  // Removes least-recently-used items until the cache takes at most `max_bytes`: library
  // entries of this format (used = meta.json's mtime, touched on each hit), extraction
  // results (<root>/extract, touched on each hit) and precompiled-header directories
  // (<root>/pch/<key>, touched on each use; skipped while a build holds its lock); and
  // staging directories older than `stale_staging_s` (builds that were killed).
  EvictionReport Evict(uint64_t max_bytes, double stale_staging_s = 3600) const;

  const std::string& root() const { return root_; }

 private:
  std::string EntryDir(const std::string& key) const;
  std::string root_;
};

}  // namespace kz::compile
