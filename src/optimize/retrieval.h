// Retrieval from the experience library (docs/optimize.md, "Memory"): BM25 over the records'
// signatures fused with the cosine similarity of their embeddings when an embedding model is
// available, BM25 alone (and a note saying why) when not.
//
// The rule: BM25's best kPool matches (FTS5, then effect) and the kPool records whose
// embedding's cosine to the query's is highest and at least kMinCosine are fused by reciprocal
// rank fusion (k = 60: score = Σ 1 / (60 + rank)); ties by lower record id. The records
// without an embedding of the current model are embedded first (batched with the query) and
// stored, so an old library gains embeddings as it is used.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "optimize/embedding.h"
#include "optimize/experience.h"

namespace kz::optimize {

struct EmbedBatch {
  std::string model;                        // the model id, one for the whole batch
  std::vector<std::vector<float>> vectors;  // one per text, in order, all of one dimension
};

// The embedding model (worker op `embed` in kz optimize, a fake in tests).
class Embedder {
 public:
  virtual ~Embedder() = default;
  // false and *err when the model is unavailable or failed; texts may be empty.
  virtual bool Embed(const std::vector<std::string>& texts, EmbedBatch* out, std::string* err) = 0;
};

struct Retrieval {
  std::vector<Experience> records;  // best first
  std::string ranking;              // how they were ranked: "bm25+embedding (...)" or "bm25 only: <why>"
};

inline constexpr size_t kPool = 50;          // candidates taken from each ranking
inline constexpr size_t kBackfillMax = 512;  // records embedded at most per retrieval

// Owns neither the library nor the embedder (both outlive it). One thread at a time. After
// the embedder fails once it is not asked again (each ask starts a child): BM25 alone.
class ExperienceRetriever {
 public:
  ExperienceRetriever(ExperienceLibrary* lib, Embedder* embedder, std::string no_embedder_reason = "no embedding model")
      : lib_(lib), embedder_(embedder), unavailable_(embedder ? "" : std::move(no_embedder_reason)) {}

  // false and *err only when the library cannot be read; an embedding failure is a note in
  // out->ranking (BM25 alone).
  bool Retrieve(const std::string& query, size_t k, Retrieval* out, std::string* err);
  // Adds `e` once per `key` (ExperienceLibrary::Add) and stores its signature's embedding; an
  // embedding failure leaves the record without one (*note says why; a later retrieval embeds it).
  bool Learn(const Experience& e, const std::string& key, std::string* note, std::string* err);
  const std::string& unavailable() const { return unavailable_; }

 private:
  // The query's vector, the records lacking one embedded and stored on the way; false: *why.
  bool EmbedQuery(const std::string& query, std::vector<float>* qv, std::string* why);
  bool Backfill(const std::vector<Experience>& missing, const EmbedBatch& batch, size_t offset, std::string* why);
  std::string RankingName() const;

  ExperienceLibrary* lib_;
  Embedder* embedder_;
  std::string unavailable_;      // "" while the embedder works
  std::string model_;            // the embedder's model, once known
  bool others_checked_ = false;  // records of another model looked for (once a run)
};

}  // namespace kz::optimize
