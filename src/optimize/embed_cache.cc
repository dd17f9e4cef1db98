#include "optimize/embed_cache.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "scoring/verdict_log.h"
#include "util/hash.h"

namespace kz::optimize {
using json = nlohmann::json;

CachedEmbedder::CachedEmbedder(Embedder* inner, std::string path) : inner_(inner), path_(std::move(path)) {
  std::ifstream in(path_);
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line, nullptr, false);
    if (!r.is_object() || !r["model"].is_string() || !r["text_xxh"].is_string() || !r["vector"].is_array()) continue;
    std::vector<float> v;
    for (const auto& x : r["vector"])
      if (x.is_number()) v.push_back(x.get<float>());
    if (v.size() == r["vector"].size() && !v.empty())
      cache_[r["text_xxh"].get<std::string>()] = {r["model"].get<std::string>(), std::move(v)};
  }
}

bool CachedEmbedder::Remember(const std::string& text, const std::string& model, const std::vector<float>& v,
                              std::string* err) {
  std::string key = util::Hash128Hex(text);
  cache_[key] = {model, v};
  scoring::VerdictLog log;
  return log.Open(path_, err) &&
         log.Append({{"model", model}, {"text_xxh", key}, {"dim", v.size()}, {"vector", v}}, err);
}

bool CachedEmbedder::Embed(const std::vector<std::string>& texts, EmbedBatch* out, std::string* err) {
  out->model.clear();
  out->vectors.assign(texts.size(), {});
  std::vector<size_t> misses;
  std::string hit_model;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto c = cache_.find(util::Hash128Hex(texts[i]));
    if (c == cache_.end() || (!hit_model.empty() && c->second.first != hit_model)) {
      misses.push_back(i);
      continue;
    }
    hit_model = c->second.first;
    out->vectors[i] = c->second.second;
  }
  out->model = hit_model;
  if (misses.empty()) return true;
  std::vector<std::string> ask;
  for (size_t i : misses) ask.push_back(texts[i]);
  EmbedBatch got;
  if (!inner_->Embed(ask, &got, err)) return false;
  if (got.vectors.size() != ask.size()) return *err = "the embedding model answered the wrong number of vectors", false;
  if (!hit_model.empty() && got.model != hit_model) {  // the model changed since: all of them anew
    misses.clear();
    ask = texts;
    for (size_t i = 0; i < texts.size(); ++i) misses.push_back(i);
    if (!inner_->Embed(ask, &got, err)) return false;
    if (got.vectors.size() != ask.size())
      return *err = "the embedding model answered the wrong number of vectors", false;
  }
  out->model = got.model;
  for (size_t j = 0; j < misses.size(); ++j) {
    out->vectors[misses[j]] = got.vectors[j];
    if (!Remember(ask[j], got.model, got.vectors[j], err)) return false;
  }
  return true;
}

}  // namespace kz::optimize
