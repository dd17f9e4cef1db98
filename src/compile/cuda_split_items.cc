#include "compile/cuda_split_items.h"

#include <cctype>

#include "compile/cuda_split_text.h"

namespace kz::compile::cuda_split {
namespace {

// `s` with each innermost parenthesised group "(...)" replaced by "()" (one pass).
std::string EmptyParens(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t j = s[i] == '(' ? s.find_first_of("()", i + 1) : kNpos;
    if (j != kNpos && s[j] == ')') {
      out += "()";
      i = j + 1;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// `s` without a leading `template <...>` that is followed by a name.
std::string_view WithoutTemplateHead(std::string_view s) {
  size_t p = SkipSpace(s, 0);
  if (!StartsWith(s, p, "template")) return s;
  size_t lt = SkipSpace(s, p + 8);
  if (lt >= s.size() || s[lt] != '<') return s;
  for (size_t g = s.find('>', lt + 1); g != kNpos; g = s.find('>', g + 1)) {
    size_t q = SkipSpace(s, g + 1);
    if (q < s.size() && (s[q] == '_' || std::isalpha(static_cast<unsigned char>(s[q])))) return s.substr(g + 1);
  }
  return s;
}

// After the closing brace of `header {...}`, does the declaration go on to a ';'?
// (classes, enums, initialisers; not functions or namespaces)
bool ContinuesToSemicolon(std::string_view header) {
  std::string parens = EmptyParens(header);
  std::string_view bare = WithoutTemplateHead(parens);
  std::string_view trimmed = RStrip(bare);
  bool typed = HasToken(bare, {"struct", "class", "union", "enum"});
  bool initialised = !trimmed.empty() && trimmed.back() == '=';
  return (typed || initialised) && !IsContainer(header);
}

// The end of the preprocessor line starting at i (continuation lines included), <= end.
size_t DirectiveEnd(std::string_view code, size_t i, size_t end) {
  for (size_t j = i;; ++j) {
    j = code.find('\n', j);
    if (j == kNpos || j >= end) return end;
    if (code[j - 1] != '\\') return j;
  }
}

bool MakeItem(std::string_view src, std::string_view code, size_t begin, size_t end, size_t brace, Item* item,
              std::string* why) {
  item->start = begin, item->end = end;
  item->text = src.substr(begin, end - begin), item->code = code.substr(begin, end - begin);
  item->body = brace == kNpos ? -1 : static_cast<long>(brace - begin);
  if (brace != kNpos && IsContainer(code.substr(begin, brace - begin)))
    return ParseItems(src, code, brace + 1, end - 1, &item->inner, why);
  return true;
}
}  // namespace

bool IsContainer(std::string_view h) {
  size_t p = SkipSpace(h, 0);
  if (StartsWith(h, p, "extern")) {
    size_t q = SkipSpace(h, p + 6);
    if (StartsWith(h, q, "\"C++\"")) return SkipSpace(h, q + 5) == h.size();
    return StartsWith(h, q, "\"C\"") && SkipSpace(h, q + 3) == h.size();
  }
  if (StartsWith(h, p, "inline") && p + 6 < h.size() && IsSpace(h[p + 6])) p = SkipSpace(h, p + 6);
  if (!StartsWith(h, p, "namespace") || (p + 9 < h.size() && IsWord(h[p + 9]))) return false;
  for (size_t q = p + 9; q < h.size(); ++q)
    if (!IsWord(h[q]) && !IsSpace(h[q]) && h[q] != ':') return false;
  return true;
}

bool ParseItems(std::string_view src, std::string_view code, size_t start, size_t end, std::vector<Item>* items,
                std::string* why) {
  size_t begin = kNpos, brace = kNpos;
  long depth = 0;
  auto close_item = [&](size_t item_end) {
    items->emplace_back();
    bool ok = MakeItem(src, code, begin, item_end, brace, &items->back(), why);
    begin = kNpos;
    return ok;
  };
  for (size_t i = start; i < end; ++i) {
    char c = code[i];
    if (begin == kNpos) {
      if (IsSpace(c)) continue;
      if (c == '#') {
        size_t j = DirectiveEnd(code, i, end);
        if (!MakeItem(src, code, i, j, kNpos, &items->emplace_back(), why)) return false;
        i = j - 1;
        continue;
      }
      begin = i, brace = kNpos;
    }
    if (c == '{') {
      if (depth == 0 && brace == kNpos) brace = i;
      ++depth;
    } else if (c == '}') {
      if (--depth < 0) return *why = "unbalanced braces", false;
      if (depth == 0 && !ContinuesToSemicolon(code.substr(begin, brace - begin)) && !close_item(i + 1)) return false;
    } else if (c == ';' && depth == 0 && !close_item(i + 1)) {
      return false;
    }
  }
  if (begin != kNpos && !Strip(code.substr(begin, end - begin)).empty())
    return *why = "source ends inside a declaration", false;
  return true;
}

}  // namespace kz::compile::cuda_split
