#include "scoring/suite.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <tuple>

namespace kz::scoring {
namespace fs = std::filesystem;

std::string TaskId(int level, int problem) {
  return "L" + std::to_string(level) + "_" + std::to_string(problem);
}

int ParseLevelDirName(const std::string& name) {
  static const std::regex kLevel(R"(level[_-]?(\d{1,4}))", std::regex::icase);
  std::smatch m;
  if (!std::regex_match(name, m, kLevel)) return 0;
  return std::stoi(m[1].str());
}

namespace {
// Sorted so that duplicate problem numbers resolve the same way on every host.
std::vector<fs::path> SortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void ReadLevel(const fs::path& dir, int level, Suite* suite) {
  static const std::regex kTask(R"((\d{1,6})_.*\.py)");
  for (const auto& p : SortedEntries(dir)) {
    std::smatch m;
    std::string file = p.filename().string();
    if (!fs::is_regular_file(p) || !std::regex_match(file, m, kTask)) continue;
    SuiteTask t{TaskId(level, std::stoi(m[1].str())), level, std::stoi(m[1].str()),
                p.stem().string(), fs::absolute(p).lexically_normal().string()};
    if (suite->tasks.count(t.id)) {
      suite->warnings.push_back(p.string() + ": problem " + std::to_string(t.problem) +
                                " of level " + std::to_string(level) + " already read from " +
                                suite->tasks[t.id].path + "; skipped");
      continue;
    }
    suite->tasks.emplace(t.id, std::move(t));
  }
}
}  // namespace

bool ReadSuite(const std::string& dir, Suite* out, std::string* err) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    *err = dir + ": not a directory";
    return false;
  }
  out->root = fs::absolute(dir).lexically_normal().string();
  for (const auto& p : SortedEntries(dir))
    if (int level = ParseLevelDirName(p.filename().string()); level > 0 && fs::is_directory(p))
      ReadLevel(p, level, out);
  if (out->tasks.empty()) {
    *err = dir + ": no task files (expected level1/ or level_1/ holding files like 1_Name.py)";
    return false;
  }
  return true;
}

std::vector<const SuiteTask*> SelectTasks(const Suite& suite, const std::vector<int>& levels,
                                          const std::vector<std::string>& task_ids) {
  std::vector<const SuiteTask*> out;
  for (const auto& [id, t] : suite.tasks) {
    bool level_ok = levels.empty() || std::count(levels.begin(), levels.end(), t.level);
    bool task_ok = task_ids.empty() || std::count(task_ids.begin(), task_ids.end(), id);
    if (level_ok && task_ok) out.push_back(&t);
  }
  std::sort(out.begin(), out.end(), [](const SuiteTask* a, const SuiteTask* b) {
    return std::tie(a->level, a->problem) < std::tie(b->level, b->problem);
  });
  return out;
}

}  // namespace kz::scoring
