// How the C++ build driver runs its tools (compilers, ninja, nm): every process on a
// util::ProcessSet poll loop, in the build's environment and sandbox, under a deadline.
// On a deadline the child's process group is killed, and so is every process carrying the
// build's marker (ninja starts each compiler in a process group of its own: build_procs.h).
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "util/subprocess.h"

namespace kz::compile {

struct ToolRun {
  bool ok = false;  // exited with status 0
  bool timed_out = false;
  int exit_code = -1;  // when it exited
  std::string out;     // stdout (bounded by the runner's tail_bytes)
  std::string output;  // stdout then stderr (each bounded by the runner's tail_bytes)
  std::string why;     // when !ok: "exit status N", "timed out after S s", "killed by SIGKILL", ...
};

// The path of `name` in the directories of `path` (a PATH list), or "" when absent.
std::string FindInPath(const std::string& name, const std::string& path);

struct ToolRunner {
  std::vector<std::pair<std::string, std::string>> env;  // on top of this process's environment
  std::shared_ptr<const util::ChildJail> jail;           // null: no sandbox
  std::string marker;                                    // KZ_BUILD_ID of every process this runner starts ("" = none)
  double timeout_s = 600;                                // per tool run
  std::chrono::steady_clock::time_point deadline{};      // also none past this (default: none)
  size_t tail_bytes = 4u << 20;
  int nice = 0;  // as util::ProcessSpec
  bool idle_class = false;

  // Runs argv[0] (looked up in PATH) in `cwd` ("" = inherit) to its end or its deadline.
  ToolRun Run(const std::vector<std::string>& argv, const std::string& cwd = "") const;
};

}  // namespace kz::compile
