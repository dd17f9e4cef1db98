#include "compile/cuda_split_text.h"

#include <algorithm>
#include <cstdio>

namespace kz::compile::cuda_split {

bool IsSpace(char c) {
  auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= '\t' && u <= '\r') || (u >= 0x1c && u <= 0x1f);
}

bool IsAlnum(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u >= 0x80;
}

bool IsWord(char c) { return c == '_' || IsAlnum(c); }

size_t SkipSpace(std::string_view s, size_t p) {
  while (p < s.size() && IsSpace(s[p])) ++p;
  return std::min(p, s.size());
}

size_t WordEnd(std::string_view s, size_t p) {
  while (p < s.size() && IsWord(s[p])) ++p;
  return p;
}

std::string_view LStrip(std::string_view s) { return s.substr(SkipSpace(s, 0)); }

std::string_view RStrip(std::string_view s) {
  size_t n = s.size();
  while (n > 0 && IsSpace(s[n - 1])) --n;
  return s.substr(0, n);
}

std::string_view Strip(std::string_view s) { return RStrip(LStrip(s)); }

std::string_view Slice(std::string_view s, size_t a, size_t b) {
  a = std::min(a, s.size()), b = std::min(b, s.size());
  return a >= b ? std::string_view() : s.substr(a, b - a);
}

bool StartsWith(std::string_view s, size_t p, std::string_view prefix) {
  return p <= s.size() && s.substr(p).substr(0, prefix.size()) == prefix;
}

bool TokenAt(std::string_view s, size_t p, std::string_view w) {
  if (p > s.size() || (p > 0 && IsWord(s[p - 1])) || !StartsWith(s, p, w)) return false;
  return p + w.size() == s.size() || !IsWord(s[p + w.size()]);
}

size_t FindToken(std::string_view s, std::initializer_list<std::string_view> words, size_t from) {
  for (size_t p = from; p < s.size();) {
    if (!IsWord(s[p])) {
      ++p;
      continue;
    }
    size_t end = WordEnd(s, p);
    if (p == 0 || !IsWord(s[p - 1])) {
      for (std::string_view w : words)
        if (s.substr(p, end - p) == w) return p;
    }
    p = end;
  }
  return kNpos;
}

size_t FindCall(std::string_view s, std::string_view w, size_t* open) {
  for (size_t p = FindToken(s, {w}); p != kNpos; p = FindToken(s, {w}, p + w.size())) {
    size_t q = SkipSpace(s, p + w.size());
    if (q < s.size() && s[q] == '(') {
      *open = q;
      return p;
    }
  }
  return kNpos;
}

std::string ReplaceToken(std::string_view s, std::string_view w, std::string_view by) {
  std::string out;
  size_t pos = 0;
  for (size_t p = FindToken(s, {w}); p != kNpos; p = FindToken(s, {w}, pos)) {
    out.append(s.substr(pos, p - pos)).append(by);
    pos = p + w.size();
  }
  return out.append(s.substr(pos));
}

std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t p = s.find(from); p != kNpos; p = s.find(from, pos)) {
    out.append(s.substr(pos, p - pos)).append(to);
    pos = p + from.size();
  }
  return out.append(s.substr(pos));
}

namespace {
// The end of the literal or comment that starts at i, with out[] wiped inside it; i when
// none starts there.
size_t BlankAt(std::string_view src, size_t i, std::string& out) {
  size_t n = src.size();
  auto wipe = [&](size_t a, size_t b) {
    for (size_t k = a; k < std::min(b, n); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  char c = src[i];
  bool after_word = i > 0 && IsWord(src[i - 1]);
  if (StartsWith(src, i, "//")) {
    size_t j = std::min(src.find('\n', i), n);
    wipe(i, j);
    return j;
  }
  if (StartsWith(src, i, "/*")) {
    size_t j = src.find("*/", i + 2);
    j = j == kNpos ? n : j + 2;
    wipe(i, j);
    return j;
  }
  if (StartsWith(src, i, "R\"") && !after_word) {  // R"delim( ... )delim"
    size_t d = i + 2;
    while (d < n && src[d] != '(' && !IsSpace(src[d])) ++d;
    if (d >= n || src[d] != '(') return i;
    std::string close = ")" + std::string(src.substr(i + 2, d - i - 2)) + "\"";
    size_t j = src.find(close, i);
    j = j == kNpos ? n : j + close.size();
    wipe(i + 1, j);
    return j;
  }
  if (c == '"' || (c == '\'' && !after_word)) {  // 1'000 is a digit separator
    size_t j = i + 1;
    while (j < n && src[j] != c && src[j] != '\n') j += src[j] == '\\' ? 2 : 1;
    wipe(i + 1, j);
    return j + 1;
  }
  return i;
}
}  // namespace

std::string Blank(std::string_view src) {
  std::string out(src);
  for (size_t i = 0; i < src.size();) {
    size_t j = BlankAt(src, i, out);
    i = j > i ? j : i + 1;
  }
  return out;
}

std::string PyRepr(std::string_view s) {
  char quote = (s.find('\'') != kNpos && s.find('"') == kNpos) ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\', out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + quote;
}

}  // namespace kz::compile::cuda_split
