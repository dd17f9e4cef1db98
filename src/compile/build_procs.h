// The processes of one build, found by a marker in their environment.
//
// ninja starts every command in a process group of its own, so nvcc (and its cicc, ptxas),
// cc1plus and ld run outside the build worker's process group: killing that group on a
// timeout leaves them running, and its resident memory does not count them. Every process
// of a build inherits the worker's environment, so a per-build marker variable finds them
// all, whatever group or parent they have now.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kz::compile {

inline constexpr const char* kBuildMarkerVar = "KZ_BUILD_ID";

struct BuildProcesses {
  std::vector<pid_t> pids;
  uint64_t rss_bytes = 0;  // resident memory of them all
};

// Processes of this user whose environment holds KZ_BUILD_ID=<id>, by id (one /proc scan).
std::map<std::string, BuildProcesses> FindBuildProcesses();

// SIGKILLs every process of build `id`, again until none is found (one may start another
// while being killed). Returns how many were killed.
int KillBuildProcesses(const std::string& id);

}  // namespace kz::compile
