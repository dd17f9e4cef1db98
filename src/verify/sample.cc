#include "verify/sample.h"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/fs.h"

namespace kz::verify {

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("KZ_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kernelzero";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kernelzero";
  return "/tmp/kernelzero-cache";
}

std::string DetectBackend(const std::string& candidate_source) {
  // An import of load_inline (it may be called under an alias) or a call of it, on a line
  // that is not a comment; a docstring that merely mentions the name does not count.
  static const std::regex kImport(R"(^\s*(from\s+\S+\s+)?import\s[^#\n]*\bload_inline\b)",
                                  std::regex::multiline);
  static const std::regex kCall(R"(^[^#\n]*\bload_inline\s*\()", std::regex::multiline);
  return std::regex_search(candidate_source, kImport) || std::regex_search(candidate_source, kCall)
             ? "cuda" : "triton";
}

bool ReadManifest(const std::string& path, const std::string& base_dir, bool on_gpu,
                  std::vector<Sample>* out, std::string* err) {
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  std::istringstream in(text);
  int line_no = 0;
  auto resolve = [&](const std::string& p) {
    return std::filesystem::path(p).is_absolute() ? p : base_dir + "/" + p;
  };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    // "self_check": true verifies the task against itself (no "candidate", or the task).
    bool self = j.is_object() && j.contains("self_check") && j["self_check"] == true;
    if (self && j.is_object() && !j.contains("candidate") && j.contains("task")) j["candidate"] = j["task"];
    if (j.is_discarded() || !j.is_object() || !j.contains("task") || !j.contains("candidate") ||
        !j["task"].is_string() || !j["candidate"].is_string()) {
      *err = path + ":" + std::to_string(line_no) +
             ": expected a JSON object with string fields \"task\" and \"candidate\"";
      return false;
    }
    if (self && j["candidate"] != j["task"]) {
      *err = path + ":" + std::to_string(line_no) + ": a self_check sample takes its task as candidate";
      return false;
    }
    Sample s;
    s.self_check = self;
    s.task_path = resolve(j["task"]);
    s.candidate_path = resolve(j["candidate"]);
    s.backend = j.value("backend", "");
    const char* key = on_gpu ? "expect_gpu" : "expect_cpu";
    if (j.contains(key) && j[key].is_string()) s.expect = j[key].get<std::string>();
    s.label = j["candidate"].get<std::string>();
    out->push_back(std::move(s));
  }
  return true;
}

}  // namespace kz::verify
