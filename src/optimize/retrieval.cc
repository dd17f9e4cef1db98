#include "optimize/retrieval.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kz::optimize {

bool ExperienceRetriever::Backfill(const std::vector<Experience>& missing, const EmbedBatch& batch, size_t offset,
                                   std::string* why) {
  for (size_t i = 0; i < missing.size(); ++i)
    if (!lib_->SetEmbedding(missing[i].id, {batch.model, batch.vectors[offset + i]}, why)) return false;
  return true;
}

bool ExperienceRetriever::EmbedQuery(const std::string& query, std::vector<float>* qv, std::string* why) {
  std::vector<Experience> missing;  // before the model is known: the records with no embedding
  if (!lib_->Unembedded(model_, &missing, why)) return false;
  if (missing.size() > kBackfillMax) missing.resize(kBackfillMax);
  std::vector<std::string> texts{query};
  for (const auto& e : missing) texts.push_back(e.signature);
  EmbedBatch batch;
  if (!embedder_->Embed(texts, &batch, why)) return unavailable_ = "embedding model unavailable: " + *why, false;
  if (batch.vectors.size() != texts.size() || batch.model.empty())
    return unavailable_ = *why = "the embedding model answered " + std::to_string(batch.vectors.size()) +
                                 " vectors for " + std::to_string(texts.size()) + " texts",
           false;
  model_ = batch.model;
  *qv = batch.vectors[0];
  if (!Backfill(missing, batch, 1, why)) return false;
  if (others_checked_) return true;
  others_checked_ = true;
  // Records embedded by another model than this one: once per run, in a second batch.
  if (!lib_->Unembedded(model_, &missing, why)) return false;
  if (missing.empty()) return true;
  if (missing.size() > kBackfillMax) missing.resize(kBackfillMax);
  texts.clear();
  for (const auto& e : missing) texts.push_back(e.signature);
  if (!embedder_->Embed(texts, &batch, why)) return unavailable_ = "embedding model unavailable: " + *why, false;
  if (batch.vectors.size() != texts.size() || batch.model != model_)
    return unavailable_ = *why = "the embedding model changed or answered the wrong number of vectors", false;
  return Backfill(missing, batch, 0, why);
}

std::string ExperienceRetriever::RankingName() const {
  char line[160];
  std::snprintf(line, sizeof line, "bm25+embedding (reciprocal rank fusion k=%d, min cosine %.2f, ", kRrfK, kMinCosine);
  return line + model_ + ")";
}

bool ExperienceRetriever::Retrieve(const std::string& query, size_t k, Retrieval* out, std::string* err) {
  out->records.clear();
  std::vector<Experience> bm25;
  if (!lib_->Retrieve(query, kPool, &bm25, err)) return false;
  auto bm25_only = [&](const std::string& why) {
    out->ranking = "bm25 only: " + why;
    out->records.assign(bm25.begin(), bm25.begin() + long(std::min(k, bm25.size())));
    return true;
  };
  if (!unavailable_.empty()) return bm25_only(unavailable_);
  std::vector<float> qv;
  std::vector<std::pair<int64_t, std::vector<float>>> cands;
  std::string why;
  if (!EmbedQuery(query, &qv, &why) || !lib_->Embedded(model_, &cands, &why)) return bm25_only(why);
  std::vector<Scored> cos = RankByCosine(qv, cands, kMinCosine);
  if (cos.size() > kPool) cos.resize(kPool);
  std::vector<int64_t> by_bm25, by_cos;
  std::map<int64_t, Experience> found;
  for (const auto& e : bm25) by_bm25.push_back(e.id), found[e.id] = e;
  for (const auto& s : cos) by_cos.push_back(s.id);
  out->ranking = RankingName();
  for (const Scored& s : FuseRrf({by_bm25, by_cos})) {
    if (out->records.size() >= k) break;
    if (!found.count(s.id) && !lib_->Get(s.id, &found[s.id], err)) return false;
    out->records.push_back(found[s.id]);
  }
  return true;
}

bool ExperienceRetriever::Learn(const Experience& e, const std::string& key, std::string* note, std::string* err) {
  note->clear();
  int64_t id = 0;
  if (!lib_->Add(e, key, &id, err)) return false;
  if (!unavailable_.empty())
    return *note = "record " + std::to_string(id) + " stored without an embedding: " + unavailable_, true;
  EmbedBatch batch;
  std::string why;
  if (!embedder_->Embed({e.signature}, &batch, &why) || batch.vectors.size() != 1 || batch.model.empty()) {
    unavailable_ = "embedding model unavailable: " + (why.empty() ? std::string("a malformed answer") : why);
    *note = "record " + std::to_string(id) + " stored without an embedding: " + unavailable_;
    return true;
  }
  model_ = model_.empty() ? batch.model : model_;
  return lib_->SetEmbedding(id, {batch.model, batch.vectors[0]}, err);
}

}  // namespace kz::optimize
