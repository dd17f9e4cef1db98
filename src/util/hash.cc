#include "util/hash.h"

#include <xxhash.h>

#include <cstdio>

namespace kz::util {

std::string Hash128Hex(std::string_view data) {
  XXH128_hash_t h = XXH3_128bits(data.data(), data.size());
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return out;
}

LabelledHasher& LabelledHasher::Add(std::string_view label, std::string_view value) {
  buffer_.append(label);
  buffer_.push_back('=');
  buffer_.append(std::to_string(value.size()));
  buffer_.push_back(':');
  buffer_.append(value);
  buffer_.push_back('\n');
  return *this;
}

}  // namespace kz::util
