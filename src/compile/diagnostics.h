// Compiler output trimmed to what a person (or a model) needs: the first errors.
#pragma once
#include <optional>
#include <string>

namespace kz::compile {

// Keeps at most `max_errors` error blocks (an "error" line and the lines that follow it up
// to the next error) and at most `max_bytes`; drops ninja/progress noise. Returns the
// input's first lines if it has no line containing "error".
std::string TrimDiagnostics(const std::string& text, int max_errors = 3, size_t max_bytes = 4096);

// A failed build whose output says nothing about the sources: the disk filled up or became
// read-only, a compiler ran out of memory or was killed (the kernel's OOM killer), a compiler
// died from a signal. Such a failure is not cached (a retry may succeed) and gets its own
// error kind: "cache" (disk), "memory_limit" or "crash"; `reason` is one line naming it.
struct EnvironmentFailure {
  std::string kind, reason;
};
std::optional<EnvironmentFailure> ClassifyBuildFailure(const std::string& compiler_output);

}  // namespace kz::compile
