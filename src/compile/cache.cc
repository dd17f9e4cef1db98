#include "compile/cache.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>
#include <filesystem>

#include "util/fs.h"
#include "util/hash.h"

namespace kz::compile {
namespace fs = std::filesystem;
namespace {
constexpr const char* kBuildOpVersion = "load_inline/1";

std::string FieldText(const nlohmann::json& call, const char* field) {
  auto it = call.find(field);
  return it == call.end() ? "" : it->dump();
}
}  // namespace

std::string ExtensionCache::Key(const nlohmann::json& call, const BuildEnv& env) {
  util::LabelledHasher h;
  h.Add("cache_format", std::to_string(kCacheFormatVersion)).Add("build_op", kBuildOpVersion);
  for (const char* f : {"name", "cpp_sources", "cuda_sources", "functions", "extra_cflags",
                        "extra_cuda_cflags", "extra_ldflags", "extra_include_paths", "with_cuda"})
    h.Add(f, FieldText(call, f));
  h.Add("torch", env.torch).Add("cuda", env.cuda).Add("python", env.python);
  h.Add("arch_list", env.arch_list);
  return h.HexDigest();
}

std::string ExtensionCache::EntryDir(const std::string& key) const {
  return root_ + "/v" + std::to_string(kCacheFormatVersion) + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<ExtensionCache::Entry> ExtensionCache::Lookup(const std::string& key,
                                                            const std::string& name) const {
  std::string dir = EntryDir(key);
  std::string meta_text, err;
  if (!util::ReadFile(dir + "/meta.json", &meta_text, &err)) return std::nullopt;
  auto meta = nlohmann::json::parse(meta_text, nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || meta.value("format", 0) != kCacheFormatVersion)
    return std::nullopt;
  if (!meta.value("ok", true)) return Entry{false, "", meta.value("diagnostics", "")};
  std::string lib = dir + "/" + name + ".so";
  if (!util::PathExists(lib)) return std::nullopt;
  return Entry{true, lib, ""};
}

void ExtensionCache::Touch(const std::string& key) const {
  std::error_code ec;
  fs::last_write_time(EntryDir(key) + "/meta.json", fs::file_time_type::clock::now(), ec);
}

std::string ExtensionCache::NewStagingDir(std::string* err) const {
  return util::MakeTempDir(root_ + "/tmp", "build-", err);
}

bool ExtensionCache::Publish(const std::string& staging, const std::string& key,
                             const std::string& name, const nlohmann::json& meta,
                             std::string* library, std::string* err) const {
  nlohmann::json m = meta;
  m["format"] = kCacheFormatVersion;
  m["key"] = key;
  if (!util::WriteFileAtomic(staging + "/meta.json", m.dump(2), err)) return false;
  std::string dir = EntryDir(key);
  if (!util::MakeDirs(fs::path(dir).parent_path().string(), err)) return false;
  bool ok = m.value("ok", true);
  for (int attempt = 0; std::rename(staging.c_str(), dir.c_str()) != 0; ++attempt) {
    int rename_errno = errno;
    // Someone published this key first, or an entry we must not keep is in the way.
    auto existing = Lookup(key, name);
    if (existing && (existing->ok || !ok)) {
      util::RemoveAll(staging);
      *library = existing->library;
      return true;
    }
    if (attempt == 2 || (rename_errno != ENOTEMPTY && rename_errno != EEXIST)) {
      *err = dir + ": cannot publish cache entry: " + std::strerror(rename_errno);
      util::RemoveAll(staging);
      return false;
    }
    // A torn or unknown-format entry, or a cached failure that this successful build
    // contradicts (a compiler killed from outside): move it aside in one rename, so that
    // a reader sees the old entry or none, never a half-removed one, then replace it.
    std::string aside = util::MakeTempDir(root_ + "/tmp", "replaced-", err);
    if (aside.empty() || std::rename(dir.c_str(), (aside + "/entry").c_str()) != 0) {
      // Another publisher may have moved it first; try again.
      if (!aside.empty()) util::RemoveAll(aside);
      continue;
    }
    util::RemoveAll(aside);
  }
  *library = ok ? dir + "/" + name + ".so" : "";
  return true;
}

}  // namespace kz::compile
