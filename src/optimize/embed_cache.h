// The run's embedding cache (docs/optimize.md, "Run directory": embeddings.jsonl): every text a
// run embedded, with its model and vector, so a resumed run reuses the vectors its first part
// computed (the same ranking, no model started for a text seen before). Lines
// {"model", "text_xxh", "dim", "vector": [float32 values]}, appended and fsync'd; a line that
// does not parse (a kill's torn write) is ignored. One thread at a time.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "optimize/retrieval.h"

namespace kz::optimize {

class CachedEmbedder : public Embedder {
 public:
  // `inner` outlives this; `path` the cache file (created on the first miss).
  CachedEmbedder(Embedder* inner, std::string path);
  // The cached vectors when every text is cached under one model; else the inner embedder for
  // the misses (and for all texts when its model differs from the hits'), appended to the file.
  bool Embed(const std::vector<std::string>& texts, EmbedBatch* out, std::string* err) override;
  size_t size() const { return cache_.size(); }

 private:
  bool Remember(const std::string& text, const std::string& model, const std::vector<float>& v, std::string* err);

  Embedder* inner_;
  std::string path_;
  std::map<std::string, std::pair<std::string, std::vector<float>>> cache_;  // text hash -> (model, vector)
};

}  // namespace kz::optimize
