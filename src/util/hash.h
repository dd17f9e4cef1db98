// Content hashes: XXH3-128 as 32 hex digits. Not cryptographic: identifies content for
// caches and deduplication; never used as a security boundary.
#pragma once
#include <string>
#include <string_view>

namespace kz::util {

std::string Hash128Hex(std::string_view data);

// Builds a hash over labelled fields, so that ("ab","c") and ("a","bc") differ and a
// renamed field changes the key: each Add() feeds "label=<len>:<bytes>\n".
class LabelledHasher {
 public:
  LabelledHasher& Add(std::string_view label, std::string_view value);
  std::string HexDigest() const { return Hash128Hex(buffer_); }
  const std::string& Text() const { return buffer_; }

 private:
  std::string buffer_;
};

}  // namespace kz::util
