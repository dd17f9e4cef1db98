// The torch API catalog (data/api_catalog.json, docs/curriculum.md "Catalog format"): the
// APIs the curriculum samples from, each with its aliases (nn module, functional, torch
// function, Tensor method) so that `nn.ReLU`, `F.relu`, `torch.relu` and `x.relu()` are one.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::curriculum {

inline constexpr const char* kCatalogFormat = "kz.api_catalog";
inline constexpr int kCatalogVersion = 1;

struct Api {
  std::string id;         // "relu": the name in API sets and statistics
  std::string kind;       // module | functional | function | method
  std::string qualified;  // "torch.nn.ReLU": the first alias
  std::vector<std::string> aliases;
  std::string call, category;
  nlohmann::json inputs;  // {"rank", "dtype", "range", "needs"}
};

// Immutable after Load; safe to read from many threads.
class Catalog {
 public:
  // Reads and checks the file: format, version (another version is an error naming both),
  // unique ids and aliases. False with *err on any problem.
  bool Load(const std::string& path, std::string* err);
  bool FromJson(const nlohmann::json& doc, std::string* err);

  int version() const { return version_; }
  const std::string& torch_version() const { return torch_; }
  size_t size() const { return apis_.size(); }
  const Api& api(size_t i) const { return apis_[i]; }
  const std::vector<Api>& apis() const { return apis_; }

  // Index of the API with this id or alias; nullopt when the catalog has none.
  std::optional<size_t> Find(const std::string& id_or_alias) const;
  // Index of the API a resolved call name means ("torch.nn.functional.relu",
  // "Tensor.relu"); nullopt for anything else.
  std::optional<size_t> Resolve(const std::string& qualified) const;

 private:
  int version_ = 0;
  std::string torch_;
  std::vector<Api> apis_;
  std::map<std::string, size_t> by_id_, by_alias_;
};

// The default catalog: $KZ_API_CATALOG, else data/api_catalog.json beside the executable's
// tree (<exe>/../../data, <exe>/../share/kz/data) or in the source tree.
std::string DefaultCatalogPath(const std::string& exe);

// Parses "relu,conv2d" or a JSON array of names into sorted, unique API indices. Errors:
// an empty set, an unknown name (named, with the catalog version), a duplicate.
bool ParseApiSet(const Catalog& catalog, const std::vector<std::string>& names,
                 std::vector<size_t>* out, std::string* err);

}  // namespace kz::curriculum
