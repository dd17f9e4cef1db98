#include "optimize/dedup.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "util/hash.h"

namespace kz::optimize {
namespace {

bool Word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// Tokens of C-like text (a string's contents): // and /* */ comments dropped.
void CTokens(const std::string& s, std::vector<std::string>* out) {
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) ++i;
    else if (s.compare(i, 2, "//") == 0) i = std::min(s.find('\n', i), s.size());
    else if (s.compare(i, 2, "/*") == 0) {
      size_t close = s.find("*/", i + 2);
      i = close == std::string::npos ? s.size() : close + 2;  // an unclosed comment runs to the end
    }
    else if (Word(c)) {
      size_t j = i;
      while (j < s.size() && Word(s[j])) ++j;
      out->push_back(s.substr(i, j - i));
      i = j;
    } else out->push_back(std::string(1, c)), ++i;
  }
}

}  // namespace

std::vector<std::string> SourceTokens(const std::string& src) {
  std::vector<std::string> out;
  for (size_t i = 0; i < src.size();) {
    char c = src[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\\') ++i;
    else if (c == '#') i = std::min(src.find('\n', i), src.size());  // a Python comment
    else if (c == '"' || c == '\'') {  // a string: ''' """ or one quote; its contents as C-like text
      std::string quote = src.compare(i, 3, std::string(3, c)) == 0 ? std::string(3, c) : std::string(1, c);
      size_t j = i + quote.size(), end = j;
      while (end < src.size() && src.compare(end, quote.size(), quote) != 0) end += src[end] == '\\' ? 2 : 1;
      out.push_back(quote);
      CTokens(src.substr(j, std::min(end, src.size()) - j), &out);
      out.push_back(quote);
      i = std::min(end + quote.size(), src.size());
    } else if (Word(c)) {
      size_t j = i;
      while (j < src.size() && Word(src[j])) ++j;
      out.push_back(src.substr(i, j - i));
      i = j;
    } else out.push_back(std::string(1, c)), ++i;
  }
  return out;
}

std::string NormalisedHash(const std::string& src) {
  std::string joined;
  for (const auto& t : SourceTokens(src)) joined += t + '\x1f';  // a separator no token holds
  return util::Hash128Hex(joined);
}

double Similarity(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto shingles = [](const std::vector<std::string>& t) {
    std::set<std::string> s;
    if (t.size() < 3) {
      std::string all;
      for (const auto& x : t) all += x + '\x1f';
      s.insert(all);
    }
    for (size_t i = 0; i + 3 <= t.size(); ++i) s.insert(t[i] + '\x1f' + t[i + 1] + '\x1f' + t[i + 2]);
    return s;
  };
  auto sa = shingles(a), sb = shingles(b);
  size_t common = 0;
  for (const auto& x : sa) common += sb.count(x);
  size_t all = sa.size() + sb.size() - common;
  return all == 0 ? 1.0 : double(common) / double(all);
}

SeenSources::Verdict SeenSources::Check(const std::string& source, double* closest) const {
  if (closest) *closest = 0;
  if (hashes_.count(NormalisedHash(source))) {
    if (closest) *closest = 1;
    return Verdict::kDuplicate;
  }
  auto tokens = SourceTokens(source);
  double best = 0;
  for (const auto& t : tokens_) best = std::max(best, Similarity(tokens, t));
  if (closest) *closest = best;
  return best >= near_ ? Verdict::kNearDuplicate : Verdict::kNew;
}

void SeenSources::Add(const std::string& source) {
  if (hashes_.insert(NormalisedHash(source)).second) tokens_.push_back(SourceTokens(source));
}

}  // namespace kz::optimize
