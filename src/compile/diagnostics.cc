#include "compile/diagnostics.h"

#include <sstream>
#include <vector>

namespace kz::compile {
namespace {
bool IsErrorLine(const std::string& l) {
  return l.find("error") != std::string::npos && l.find("Error building extension") == std::string::npos &&
         l.find("ninja: build stopped") == std::string::npos;
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
  for (const auto& l : lines) {
    if (IsErrorLine(l)) {
      if (++errors > max_errors) break;
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

}  // namespace kz::compile
