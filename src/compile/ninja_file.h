// Edits of the build.ninja that torch's load_inline layout writes (docs/compile-farm.md):
// reading and setting its top-level variables, the fast-linker rule, and the outputs a
// failed ninja run names. Pure text functions plus the linker lookup in PATH.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>

namespace kz::compile {

// The top-level `name = value` lines of a build.ninja (the first of each name).
std::map<std::string, std::string> NinjaVars(const std::string& text);

// `text` with the first `name = ...` line's value replaced (unchanged when absent).
std::string SetNinjaVar(const std::string& text, const std::string& name, const std::string& value);

// The linker to try first: "lld" when ld.lld is in `path` (a PATH list), else "gold" for
// ld.gold, else "" (the default one only).
std::string ChooseLinker(const std::string& path);

// `text` with torch's link rule `$cxx $in $ldflags -o $out` running `-fuse-ld=<ld>` first
// and, if that fails, the rule as torch wrote it; nullopt when the rule is not torch's.
std::optional<std::string> UseFastLinker(const std::string& text, const std::string& ld);

// The outputs ninja names as failed ("FAILED: main.o", ninja 1.11; "FAILED: [code=1] main.o",
// 1.12+) in a build's output.
std::set<std::string> FailedOutputs(const std::string& output);

}  // namespace kz::compile
