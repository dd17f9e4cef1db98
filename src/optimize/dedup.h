// Duplicates among `kz optimize`'s candidates (docs/optimize.md): a candidate whose
// normalised source was verified before is never verified again, and a near duplicate (token
// 3-shingle Jaccard similarity >= a threshold) of an already-verified one is refused before
// the GPU is spent on it. Normalisation: a token stream where Python comments (outside
// strings) and C/CUDA comments (inside strings: the kernel sources of load_inline and
// Triton's docstrings) are dropped and whitespace does not count; string contents are
// tokenised too, so a kernel reformatted inside its string is the same kernel.
#pragma once
#include <string>
#include <unordered_set>
#include <vector>

namespace kz::optimize {

std::vector<std::string> SourceTokens(const std::string& python_source);
std::string NormalisedHash(const std::string& python_source);  // XXH3-128 hex of the token stream

// Jaccard similarity of the two token streams' 3-shingle sets (1 for two identical streams,
// also when both are shorter than 3 tokens and equal).
double Similarity(const std::vector<std::string>& a, const std::vector<std::string>& b);

class SeenSources {
 public:
  explicit SeenSources(double near_threshold = 0.95) : near_(near_threshold) {}
  enum class Verdict { kNew, kDuplicate, kNearDuplicate };
  // What `source` is against everything added; *closest gets the best similarity seen.
  Verdict Check(const std::string& source, double* closest = nullptr) const;
  void Add(const std::string& source);
  size_t size() const { return hashes_.size(); }

 private:
  double near_;
  std::unordered_set<std::string> hashes_;
  std::vector<std::vector<std::string>> tokens_;
};

}  // namespace kz::optimize
