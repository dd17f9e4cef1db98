// Compiler output trimmed to what a person (or a model) needs: the first errors.
#pragma once
#include <string>

namespace kz::compile {

// Keeps at most `max_errors` error blocks (an "error" line and the lines that follow it up
// to the next error) and at most `max_bytes`; drops ninja/progress noise. Returns the
// input's first lines if it has no line containing "error".
std::string TrimDiagnostics(const std::string& text, int max_errors = 3, size_t max_bytes = 4096);

}  // namespace kz::compile
