#include "compile/diagnostics.h"

#include <cstdlib>
#include <sstream>
#include <vector>

namespace kz::compile {
namespace {
bool IsErrorLine(const std::string& l) {
  return l.find("error") != std::string::npos && l.find("Error building extension") == std::string::npos &&
         l.find("ninja: build stopped") == std::string::npos;
}
// GCC's context printed before an error: the include chain and the instantiation or
// function it happened in ("required from here" names the candidate's line).
bool IsContext(const std::string& l) {
  return l.rfind("In file included from", 0) == 0 || l.find(" from ") != std::string::npos ||
         l.find(": In function") != std::string::npos || l.find(": In member function") != std::string::npos ||
         l.find(": In static member function") != std::string::npos ||
         l.find(": In instantiation of") != std::string::npos ||
         l.find(": In lambda function") != std::string::npos || l.find("required from") != std::string::npos ||
         l.find(": At global scope") != std::string::npos;
}
bool IsNoise(const std::string& l) {
  return l.rfind("[", 0) == 0 || l.find("ninja: build stopped") != std::string::npos ||
         l.rfind("FAILED:", 0) == 0 || l.find(" -MMD ") != std::string::npos ||
         l.find("/nvcc ") != std::string::npos;
}
}  // namespace

std::string TrimDiagnostics(const std::string& text, int max_errors, size_t max_bytes) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  int errors = 0;
  bool in_block = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (IsErrorLine(l)) {
      if (++errors > max_errors) break;
      if (!in_block) {  // the first error: keep the context lines just before it
        size_t first = i;
        while (first > 0 && i - first < 12 && IsContext(lines[first - 1]) && !IsNoise(lines[first - 1])) --first;
        for (size_t j = first; j < i; ++j) out += lines[j] + "\n";
      }
      in_block = true;
    }
    if (in_block && !IsNoise(l)) out += l + "\n";
    if (out.size() > max_bytes) break;
  }
  if (errors == 0) {
    for (size_t i = 0; i < lines.size() && out.size() < max_bytes; ++i) out += lines[i] + "\n";
  }
  if (out.size() > max_bytes) out = out.substr(0, max_bytes) + "\n[... trimmed]\n";
  return out;
}

std::optional<EnvironmentFailure> ClassifyBuildFailure(const std::string& out) {
  struct Pattern {
    const char* text;
    const char* kind;
    const char* reason;
  };
  static const Pattern kPatterns[] = {
      {"No space left on device", "cache", "the build could not write its output: no space left on device (the cache directory or TMPDIR is full)"},
      {"Disk quota exceeded", "cache", "the build could not write its output: disk quota exceeded (cache directory or TMPDIR)"},
      {"Read-only file system", "cache", "the build could not write its output: read-only file system (cache directory or TMPDIR)"},
      {"virtual memory exhausted", "memory_limit", "a compiler ran out of memory (virtual memory exhausted)"},
      {"out of memory allocating", "memory_limit", "a compiler ran out of memory"},
      {"Cannot allocate memory", "memory_limit", "a compiler ran out of memory (cannot allocate memory)"},
      {"std::bad_alloc", "memory_limit", "a compiler ran out of memory (std::bad_alloc)"},
      {"Killed signal terminated program", "memory_limit", "a compiler was killed by SIGKILL, usually the kernel's out-of-memory killer"},
      {"internal compiler error: Killed", "memory_limit", "a compiler was killed by SIGKILL, usually the kernel's out-of-memory killer"},
      {"signal 9 [Killed]", "memory_limit", "a compiler was killed by SIGKILL, usually the kernel's out-of-memory killer"},
      {"died due to signal 9", "memory_limit", "a compiler was killed by SIGKILL, usually the kernel's out-of-memory killer"},
      {"signal terminated program", "crash", "a compiler died from a signal"},
      {"terminated with signal", "crash", "a compiler died from a signal"},
      {"died due to signal", "crash", "a compiler died from a signal"},
  };
  // Only the tools' own lines count: not source lines they echo (indented) nor a
  // candidate's #error, which could otherwise make its compile error look like the machine's.
  std::istringstream tool_lines(out);
  for (std::string l; std::getline(tool_lines, l);) {
    if (l.empty() || l[0] == ' ' || l[0] == '\t' || l.find("#error") != std::string::npos) continue;
    for (const auto& p : kPatterns)
      if (l.find(p.text) != std::string::npos)
        return EnvironmentFailure{p.kind, std::string(p.reason) + "; not cached, a retry may succeed"};
  }
  // ninja >= 1.12 gives a command's exit code ("FAILED: [code=137] out"); over 128 is a
  // signal. The shell's "Killed" / "Segmentation fault" lines say the same.
  int signal = 0;
  if (size_t at = out.find("FAILED: [code="); at != std::string::npos) {
    int code = std::atoi(out.c_str() + at + 14);
    if (code > 128 && code < 160) signal = code - 128;
  }
  std::istringstream lines(out);
  for (std::string l; !signal && std::getline(lines, l);) {
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
    if (l == "Killed") signal = 9;
    else if (l.rfind("Segmentation fault", 0) == 0) signal = 11;
    else if (l.rfind("Aborted", 0) == 0) signal = 6;
  }
  if (signal == 9)
    return EnvironmentFailure{"crash", "a compiler was killed by SIGKILL (the kernel's out-of-memory "
                                       "killer, or killed from outside); not cached, a retry may succeed"};
  if (signal)
    return EnvironmentFailure{"crash", "a compiler died from signal " + std::to_string(signal) +
                                           "; not cached, a retry may succeed"};
  // ninja says nothing of a command killed by a signal: a failure without a single line from
  // a compiler (only torch's prefix, ninja's progress, FAILED: and the command echoed after
  // it) was not the compiler judging the sources.
  std::istringstream in(out);
  bool after_failed = false;
  for (std::string l; std::getline(in, l);) {
    bool command = after_failed;
    after_failed = l.rfind("FAILED:", 0) == 0;
    if (l.rfind("Error building extension", 0) == 0) {
      size_t colon = l.find("': ");
      l = colon == std::string::npos ? "" : l.substr(colon + 3);
    }
    if (command || after_failed || l.rfind("[", 0) == 0 || l.rfind("ninja: ", 0) == 0 ||
        l.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    return std::nullopt;  // some compiler or linker said something
  }
  return EnvironmentFailure{"crash", "the build failed without a word from the compiler (a compiler "
                                     "killed by a signal?); not cached, a retry may succeed"};
}

}  // namespace kz::compile
