// The top-level items of cuda.cu for the split (cuda_split.h): preprocessor lines,
// declarations ending in ';' and definitions ending at their closing brace; the items of a
// namespace block are parsed inside it.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace kz::compile::cuda_split {

struct Item {
  size_t start = 0, end = 0;  // offsets in the source
  std::string_view text;      // the item's source text
  std::string_view code;      // the same with comments and literals blanked (Blank)
  long body = -1;             // offset in `text` of the depth-0 '{', or -1
  std::vector<Item> inner;    // items of a namespace block
  std::string_view Header() const { return body >= 0 ? code.substr(0, body) : code; }
};

// The items of src[start:end]; `code` is Blank(src). The views point into src and code,
// which must outlive them. False with the reason when braces do not balance.
bool ParseItems(std::string_view src, std::string_view code, size_t start, size_t end, std::vector<Item>* items,
                std::string* why);

// True when `header` (blanked text before a '{') opens a namespace or extern "C" block.
bool IsContainer(std::string_view header);

}  // namespace kz::compile::cuda_split
