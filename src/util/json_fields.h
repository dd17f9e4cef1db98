// Lenient readers of untrusted JSON (verdicts, metrics lines): a missing or mistyped field
// reads as a default instead of throwing. Header-only.
#pragma once
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::util {

// j[key] when j is an object holding a number there, else 0.
inline double JsonNumber(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}
// j[key] when j is an object holding a string there, else "".
inline std::string JsonString(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
// j[path[0]][path[1]]... when every step is an object holding the key, else null.
inline const nlohmann::json& JsonAt(const nlohmann::json& j, std::initializer_list<const char*> path) {
  static const nlohmann::json kNull;
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return kNull;
    p = &(*p)[k];
  }
  return *p;
}

}  // namespace kz::util
