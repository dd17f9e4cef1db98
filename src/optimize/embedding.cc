#include "optimize/embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace kz::optimize {

std::string EncodeVector(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v[i], 4);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = char((bits >> (8 * b)) & 0xff);
  }
  return out;
}

std::optional<std::vector<float>> DecodeVector(const void* data, size_t bytes, int dim, std::string* err) {
  if (dim < 1 || bytes != size_t(dim) * 4) {
    *err = "an embedding of " + std::to_string(bytes) + " bytes labelled with dimension " + std::to_string(dim) +
           " (expected " + std::to_string(std::max(dim, 0) * 4) + " bytes of float32)";
    return std::nullopt;
  }
  const auto* p = static_cast<const unsigned char*>(data);
  std::vector<float> v(static_cast<size_t>(dim));
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits = 0;
    for (int b = 0; b < 4; ++b) bits |= uint32_t(p[i * 4 + b]) << (8 * b);
    std::memcpy(&v[i], &bits, 4);
    if (!std::isfinite(v[i])) {
      *err = "an embedding with a non-finite value at index " + std::to_string(i);
      return std::nullopt;
    }
  }
  return v;
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return 0;
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double(a[i]) * b[i];
    na += double(a[i]) * a[i];
    nb += double(b[i]) * b[i];
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0;
}

namespace {
void SortScored(std::vector<Scored>* v) {
  std::sort(v->begin(), v->end(),
            [](const Scored& x, const Scored& y) { return x.score != y.score ? x.score > y.score : x.id < y.id; });
}
}  // namespace

std::vector<Scored> RankByCosine(const std::vector<float>& query,
                                 const std::vector<std::pair<int64_t, std::vector<float>>>& candidates,
                                 double min_cosine) {
  std::vector<Scored> out;
  for (const auto& [id, v] : candidates)
    if (double c = Cosine(query, v); c >= min_cosine) out.push_back({id, c});
  SortScored(&out);
  return out;
}

std::vector<Scored> FuseRrf(const std::vector<std::vector<int64_t>>& rankings, int k) {
  std::map<int64_t, double> score;
  for (const auto& ranking : rankings)
    for (size_t r = 0; r < ranking.size(); ++r) score[ranking[r]] += 1.0 / double(k + int(r) + 1);
  std::vector<Scored> out;
  for (const auto& [id, s] : score) out.push_back({id, s});
  SortScored(&out);
  return out;
}

}  // namespace kz::optimize
