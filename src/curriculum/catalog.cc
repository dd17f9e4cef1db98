#include "curriculum/catalog.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "util/fs.h"

namespace kz::curriculum {
using nlohmann::json;

bool Catalog::Load(const std::string& path, std::string* err) {
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return *err = path + ": not JSON", false;
  if (!FromJson(doc, err)) return *err = path + ": " + *err, false;
  return true;
}

bool Catalog::FromJson(const json& doc, std::string* err) {
  if (!doc.is_object() || doc.value("format", "") != kCatalogFormat)
    return *err = std::string("not an API catalog (format must be ") + kCatalogFormat + ")", false;
  version_ = doc.value("version", 0);
  if (version_ != kCatalogVersion)
    return *err = "API catalog version " + std::to_string(version_) + ", this kz reads version " +
                  std::to_string(kCatalogVersion) + " (regenerate it with scripts/make_api_catalog.py)",
           false;
  torch_ = doc.value("torch", "");
  if (!doc.contains("apis") || !doc["apis"].is_array()) return *err = "no apis array", false;
  for (const auto& e : doc["apis"]) {
    Api a;
    a.id = e.value("id", "");
    a.kind = e.value("kind", "");
    a.qualified = e.value("qualified", "");
    a.call = e.value("call", "");
    a.category = e.value("category", "");
    a.inputs = e.value("inputs", json::object());
    if (e.contains("aliases") && e["aliases"].is_array()) a.aliases = e["aliases"].get<std::vector<std::string>>();
    if (a.id.empty()) return *err = "an API without an id", false;
    if (!by_id_.emplace(a.id, apis_.size()).second) return *err = "duplicate API id " + a.id, false;
    for (const auto& alias : a.aliases)
      if (!by_alias_.emplace(alias, apis_.size()).second) return *err = "alias " + alias + " of two APIs", false;
    apis_.push_back(std::move(a));
  }
  return true;
}

std::optional<size_t> Catalog::Find(const std::string& name) const {
  if (auto it = by_id_.find(name); it != by_id_.end()) return it->second;
  return Resolve(name);
}

std::optional<size_t> Catalog::Resolve(const std::string& qualified) const {
  auto it = by_alias_.find(qualified);
  if (it != by_alias_.end()) return it->second;
  return std::nullopt;
}

std::string DefaultCatalogPath(const std::string& exe) {
  if (const char* env = std::getenv("KZ_API_CATALOG"); env && *env) return env;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path bin = fs::canonical(exe, ec).parent_path();
  for (fs::path p : {bin / "../../data/api_catalog.json", bin / "../share/kz/data/api_catalog.json"})
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  return std::string(KZ_SOURCE_DIR) + "/data/api_catalog.json";
}

bool ParseApiSet(const Catalog& catalog, const std::vector<std::string>& names, std::vector<size_t>* out,
                 std::string* err) {
  out->clear();
  for (const auto& name : names) {
    if (name.empty()) continue;
    auto i = catalog.Find(name);
    if (!i)
      return *err = "unknown API '" + name + "' (not in the API catalog, version " +
                    std::to_string(catalog.version()) + ")",
             false;
    if (std::find(out->begin(), out->end(), *i) != out->end())
      return *err = "API '" + name + "' twice in one set", false;
    out->push_back(*i);
  }
  if (out->empty()) return *err = "empty API set", false;
  std::sort(out->begin(), out->end());
  return true;
}

}  // namespace kz::curriculum
