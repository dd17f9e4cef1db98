// Lexical helpers of the cuda.cu split (cuda_split.h). Character classes, strips and word
// searches mean what Python's `str` methods and `re` give them on ASCII, so the split
// matches the Python op it replaced byte for byte. Text is UTF-8 handled as bytes: a
// byte >= 0x80 counts as a word character (part of a non-ASCII letter); Python would
// see non-ASCII spaces and punctuation as non-word, which C++ accepts only in comments
// and literals, where they are blanked first.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

namespace kz::compile::cuda_split {

constexpr size_t kNpos = std::string_view::npos;

bool IsSpace(char c);  // \t \n \v \f \r, 0x1c-0x1f and ' ' (str.isspace, re's \s)
bool IsWord(char c);   // [A-Za-z0-9_] or a byte >= 0x80 (re's \w)
bool IsAlnum(char c);  // IsWord without '_' (str.isalnum)

// The first index >= p of `s` that is not IsSpace, or s.size().
size_t SkipSpace(std::string_view s, size_t p);
// The end of the run of IsWord characters that starts at p (p itself when none).
size_t WordEnd(std::string_view s, size_t p);
std::string_view Strip(std::string_view s);
std::string_view LStrip(std::string_view s);
std::string_view RStrip(std::string_view s);
// Python's s[a:b] for a, b >= 0: clamped to the string, empty when a >= b.
std::string_view Slice(std::string_view s, size_t a, size_t b);
bool StartsWith(std::string_view s, size_t p, std::string_view prefix);

// True when the word `w` (word characters only) starts at p with a word boundary on both
// sides: re's \bw\b matching at p.
bool TokenAt(std::string_view s, size_t p, std::string_view w);
// The first p >= from where one of `words` is a token (TokenAt), or kNpos.
size_t FindToken(std::string_view s, std::initializer_list<std::string_view> words, size_t from = 0);
inline bool HasToken(std::string_view s, std::initializer_list<std::string_view> words) {
  return FindToken(s, words) != kNpos;
}
// Where re's \b<w>\s*\( first matches in s, or kNpos; *open gets the index of the '('.
size_t FindCall(std::string_view s, std::string_view w, size_t* open);
// `s` with every token equal to `w` (word characters only) replaced by `by` (re.sub of \bw\b).
std::string ReplaceToken(std::string_view s, std::string_view w, std::string_view by);
// `s` with every occurrence of `from` (not empty) replaced by `to` (str.replace).
std::string ReplaceAll(std::string_view s, std::string_view from, std::string_view to);

// `src` with comments and the contents of string, character and raw string literals
// replaced by spaces, newlines kept: same length, so offsets carry over.
std::string Blank(std::string_view src);

// Python's repr() of a string (for refusal messages).
std::string PyRepr(std::string_view s);

}  // namespace kz::compile::cuda_split
