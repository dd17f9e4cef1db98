#include "compile/tool_runner.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "compile/build_procs.h"

namespace kz::compile {

std::string FindInPath(const std::string& name, const std::string& path) {
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return "";
}

ToolRun ToolRunner::Run(const std::vector<std::string>& argv, const std::string& cwd) const {
  util::ProcessSpec spec;
  spec.argv = argv;
  spec.env = env;
  if (!marker.empty()) spec.env.emplace_back(kBuildMarkerVar, marker);
  spec.cwd = cwd;
  spec.wall_limit_s = timeout_s;
  if (deadline != std::chrono::steady_clock::time_point{}) {
    double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    spec.wall_limit_s = std::max(0.001, std::min(timeout_s, left));
  }
  spec.tail_bytes = tail_bytes;
  spec.jail = jail;
  spec.nice = nice;
  spec.idle_class = idle_class;
  double spec_limit = spec.wall_limit_s;
  util::ProcessSet set;
  set.Start(std::move(spec));
  std::vector<std::pair<util::ProcessSet::Id, util::ProcessResult>> done;
  while (done.empty()) done = set.WaitAny(-1);
  const util::ProcessResult& p = done.front().second;
  if (!marker.empty() && p.end != util::ProcessEnd::kExited) KillBuildProcesses(marker);  // ninja's compilers
  ToolRun r;
  r.out = p.stdout_tail;
  r.output = p.stdout_tail + p.stderr_tail;
  r.timed_out = p.end == util::ProcessEnd::kTimedOut;
  if (p.end == util::ProcessEnd::kExited) r.exit_code = p.exit_code;
  r.ok = p.end == util::ProcessEnd::kExited && p.exit_code == 0;
  if (r.ok) return r;
  switch (p.end) {
    case util::ProcessEnd::kExited:
      r.why = "exit status " + std::to_string(p.exit_code);
      break;
    case util::ProcessEnd::kTimedOut:
      r.why = "timed out after " + std::to_string(static_cast<int>(spec_limit)) + " s";
      break;
    case util::ProcessEnd::kSignaled:
      r.why = "killed by " + util::SignalName(p.signal);
      break;
    case util::ProcessEnd::kMemoryExceeded:
      r.why = "over its memory limit";
      break;
    case util::ProcessEnd::kSpawnFailed:
      r.why = "could not start " + argv.front() + ": " + p.spawn_error;
      break;
  }
  return r;
}

}  // namespace kz::compile
