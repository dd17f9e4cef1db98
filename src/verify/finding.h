#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kz::verify {

// "line N" for a screen finding, or "(whole file)" when its `line` is null or absent
// (docs/screen-rules.md: file-level findings such as gen.no_kernel have no line).
inline std::string FindingLocation(const nlohmann::json& finding) {
  auto it = finding.find("line");
  if (it == finding.end() || !it->is_number_integer()) return "(whole file)";
  return "at line " + std::to_string(it->get<long long>());
}

}  // namespace kz::verify
