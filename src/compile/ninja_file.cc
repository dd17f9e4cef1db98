#include "compile/ninja_file.h"

#include <cctype>
#include <sstream>
#include <string_view>
#include <vector>

#include "compile/tool_runner.h"

namespace kz::compile {
namespace {
constexpr std::string_view kPlainLink = "rule link\n  command = $cxx $in $ldflags -o $out\n";

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The name of a `name = value` line (a word at column 0, then " = "), or "".
std::string VarName(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && IsWordChar(line[n])) ++n;
  if (n == 0 || line.substr(n, 3) != " = ") return "";
  return std::string(line.substr(0, n));
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}
}  // namespace

std::map<std::string, std::string> NinjaVars(const std::string& text) {
  std::map<std::string, std::string> out;
  for (auto line : Lines(text)) {
    std::string name = VarName(line);
    if (!name.empty()) out.emplace(name, std::string(line.substr(name.size() + 3)));
  }
  return out;
}

std::string SetNinjaVar(const std::string& text, const std::string& name, const std::string& value) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (VarName(std::string_view(text).substr(at, end - at)) == name)
      return text.substr(0, at) + name + " = " + value + text.substr(end);
    at = end + 1;
  }
  return text;
}

std::string ChooseLinker(const std::string& path) {
  for (const char* ld : {"lld", "gold"})
    if (!FindInPath(std::string("ld.") + ld, path).empty()) return ld;
  return "";
}

std::optional<std::string> UseFastLinker(const std::string& text, const std::string& ld) {
  size_t at = text.find(kPlainLink);
  if (ld.empty() || at == std::string::npos) return std::nullopt;
  std::string fast =
      "rule link\n  command = $cxx $in $ldflags -fuse-ld=" + ld + " -o $out 2>/dev/null || $cxx $in $ldflags -o $out\n";
  return text.substr(0, at) + fast + text.substr(at + kPlainLink.size());
}

std::set<std::string> FailedOutputs(const std::string& output) {
  std::set<std::string> out;
  for (auto line : Lines(output)) {
    if (line.substr(0, 8) != "FAILED: ") continue;
    line.remove_prefix(8);
    if (line.substr(0, 6) == "[code=") {
      size_t close = line.find("] ");
      if (close == std::string_view::npos) continue;
      line.remove_prefix(close + 2);
    }
    std::istringstream words{std::string(line)};
    for (std::string w; words >> w;) out.insert(w);
  }
  return out;
}

}  // namespace kz::compile
