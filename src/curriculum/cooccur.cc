#include "curriculum/cooccur.h"

#include <algorithm>
#include <filesystem>

#include "util/fs.h"
#include "util/hash.h"

namespace kz::curriculum {
using nlohmann::json;
namespace fs = std::filesystem;

bool ListCorpus(const std::vector<std::string>& roots, std::vector<CorpusFile>* out, std::string* err) {
  out->clear();
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return *err = root + ": not a directory", false;
    std::vector<CorpusFile> here;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (it->is_directory(ec) && name.size() > 1 && name[0] == '.') {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(ec) && it->path().extension() == ".py") {
        std::string rel = fs::relative(it->path(), fs::path(root).parent_path(), ec).string();
        here.push_back({rel, fs::absolute(it->path()).string()});
      }
    }
    if (ec) return *err = root + ": " + ec.message(), false;
    std::sort(here.begin(), here.end(), [](const auto& a, const auto& b) { return a.rel < b.rel; });
    out->insert(out->end(), here.begin(), here.end());
  }
  return true;
}

bool CorpusHash(const std::vector<CorpusFile>& files, std::string* out, std::string* err) {
  util::LabelledHasher h;
  h.Add("format", "kz.corpus/1");
  for (const auto& f : files) {
    std::string bytes;
    if (!util::ReadFile(f.abs, &bytes, err)) return false;
    h.Add("path", f.rel).Add("xxh128", util::Hash128Hex(bytes));
  }
  *out = h.HexDigest();
  return true;
}

void CountModule(Stats* s, const std::string& rel, const std::vector<size_t>& apis) {
  const size_t n = s->n();
  for (size_t a : apis) {
    ++s->count[a];
    for (size_t b : apis) ++s->pair[a * n + b];
  }
  ++s->modules;
  s->per_module.push_back({rel, apis});
}

bool Mine(const std::vector<std::string>& roots, const Catalog& catalog, Scanner& scanner, bool with_operators,
          Stats* s, std::string* err) {
  std::vector<CorpusFile> files;
  std::string hash;
  if (!ListCorpus(roots, &files, err) || !CorpusHash(files, &hash, err)) return false;
  *s = Stats();
  s->catalog_version = catalog.version();
  s->roots = roots;
  s->corpus_hash = hash;
  s->with_operators = with_operators;
  s->count.assign(catalog.size(), 0);
  s->pair.assign(catalog.size() * catalog.size(), 0);
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.abs);
  std::vector<ModuleFacts> facts;
  if (!scanner.Scan(paths, &facts, err)) return false;
  s->files = files.size();
  for (size_t i = 0; i < files.size(); ++i) {
    const ModuleFacts& m = facts[i];
    if (m.status != "ok") {
      ++s->skipped[m.status];
    } else if (!m.has_model) {
      ++s->skipped["no_model"];
    } else {
      CountModule(s, files[i].rel, ApisUsed(m, catalog, Scope::kModel, with_operators));
    }
  }
  return true;
}

json StatsToJson(const Stats& s, const Catalog& catalog) {
  json apis = json::array(), pairs = json::array(), modules = json::array();
  for (size_t a = 0; a < s.n(); ++a) {
    if (s.count[a]) apis.push_back({{"id", catalog.api(a).id}, {"count", s.count[a]}});
    for (size_t b = a + 1; b < s.n(); ++b)
      if (s.Pair(a, b)) pairs.push_back({catalog.api(a).id, catalog.api(b).id, s.Pair(a, b)});
  }
  for (const auto& m : s.per_module) {
    json ids = json::array();
    for (size_t a : m.apis) ids.push_back(catalog.api(a).id);
    modules.push_back({{"path", m.path}, {"apis", ids}});
  }
  return {{"format", kStatsFormat}, {"version", kStatsVersion}, {"catalog_version", s.catalog_version},
          {"corpus", {{"roots", s.roots}, {"hash", s.corpus_hash}, {"files", s.files}, {"modules", s.modules},
                      {"skipped", s.skipped}, {"with_operators", s.with_operators}}},
          {"apis", apis}, {"pairs", pairs}, {"modules", modules}};
}

namespace {
bool IdOf(const Catalog& c, const json& id, size_t* out, std::string* err) {
  auto i = id.is_string() ? c.Find(id.get<std::string>()) : std::nullopt;
  if (!i) return *err = "statistics name API " + id.dump() + ", not in the catalog", false;
  return *out = *i, true;
}
}  // namespace

bool StatsFromJson(const json& doc, const Catalog& catalog, Stats* s, std::string* err) {
  if (!doc.is_object() || doc.value("format", "") != kStatsFormat) return *err = "not a kz.cooccur file", false;
  if (doc.value("version", 0) != kStatsVersion)
    return *err = "statistics version " + doc.value("version", json(0)).dump() + ", this kz reads version " +
                  std::to_string(kStatsVersion), false;
  if (doc.value("catalog_version", 0) != catalog.version())
    return *err = "statistics of API catalog version " + doc.value("catalog_version", json(0)).dump() +
                  ", the catalog is version " + std::to_string(catalog.version()) + " (mine the corpus again)",
           false;
  *s = Stats();
  s->catalog_version = catalog.version();
  const json corpus = doc.value("corpus", json::object());
  s->roots = corpus.value("roots", std::vector<std::string>{});
  s->corpus_hash = corpus.value("hash", "");
  s->files = corpus.value("files", size_t{0});
  s->skipped = corpus.value("skipped", std::map<std::string, size_t>{});
  s->with_operators = corpus.value("with_operators", false);
  s->count.assign(catalog.size(), 0);
  s->pair.assign(catalog.size() * catalog.size(), 0);
  for (const auto& m : doc.value("modules", json::array())) {
    std::vector<size_t> apis;
    for (const auto& id : m.value("apis", json::array())) {
      size_t i;
      if (!IdOf(catalog, id, &i, err)) return false;
      apis.push_back(i);
    }
    std::sort(apis.begin(), apis.end());
    CountModule(s, m.value("path", ""), apis);
  }
  return true;
}

bool SaveStats(const std::string& path, const Stats& s, const Catalog& catalog, std::string* err) {
  return util::WriteFileAtomic(path, StatsToJson(s, catalog).dump(1) + "\n", err);
}

bool LoadStats(const std::string& path, const Catalog& catalog, Stats* out, std::string* err) {
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return *err = path + ": not JSON", false;
  if (!StatsFromJson(doc, catalog, out, err)) return *err = path + ": " + *err, false;
  return true;
}

}  // namespace kz::curriculum
