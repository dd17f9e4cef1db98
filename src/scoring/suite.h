// A KernelBench-format suite: level directories (`level1/` or `level_1/`) of task files
// named `<problem>_<Name>.py`. A task's id is "L<level>_<problem>" (e.g. "L1_19").
#pragma once
#include <map>
#include <string>
#include <vector>

namespace kz::scoring {

struct SuiteTask {
  std::string id;    // "L1_19"
  int level = 0;
  int problem = 0;
  std::string name;  // file name without ".py", e.g. "19_ReLU"
  std::string path;  // absolute
};

struct Suite {
  std::string root;                        // absolute
  std::map<std::string, SuiteTask> tasks;  // by id
  std::vector<std::string> warnings;       // e.g. two files with one problem number
};

std::string TaskId(int level, int problem);

// "level1", "level_1", "level-1" (case-insensitive) → 1; anything else → 0.
int ParseLevelDirName(const std::string& name);

// Reads the suite; false (with *err) only when `dir` is not a readable directory or holds
// no task at all. Files that are not `<digits>_<...>.py` are skipped; the second file
// with a problem number already seen in its level is skipped with a warning.
bool ReadSuite(const std::string& dir, Suite* out, std::string* err);

// The suite's tasks of `levels` and `task_ids` (each empty: all), by level then problem.
// The pointers point into `suite`.
std::vector<const SuiteTask*> SelectTasks(const Suite& suite, const std::vector<int>& levels,
                                          const std::vector<std::string>& task_ids);

}  // namespace kz::scoring
