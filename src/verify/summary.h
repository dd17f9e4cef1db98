// A short human-readable rendering of a verdict.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kz::verify {

// A few lines: status and reason, what ran where, trials, timings and speedup, what was not
// checked. Ends with a newline.
std::string Summarize(const nlohmann::json& verdict);

}  // namespace kz::verify
