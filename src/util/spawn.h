// Internal to util: starting one child for ProcessSet — its pipes, the protocol channel
// (fd 3, or stdin and stdout with `stdio_channel`), its process group, and its jail
// (clone() into the jail's namespaces, the id maps written by the parent, then exec).
#pragma once
#include <sys/types.h>

#include <string>

#include "util/subprocess.h"
#include "util/unique_fd.h"

namespace kz::util::internal {

struct SpawnedFds {
  UniqueFd out;   // the child's stdout (empty with `stdio_channel`: stdout is the channel)
  UniqueFd err;   // the child's stderr
  UniqueFd chan;  // the parent's end of the channel, or empty
};

// Forks (or clones into spec.jail) and execs spec.argv. On success fills *fds (non-blocking,
// close-on-exec) and *pid, and returns "". On failure (a pipe, the socketpair or /dev/null
// not opened, fork or clone refused, the jail not set up) returns why, with nothing of this
// call left open and no child left behind.
std::string Spawn(const ProcessSpec& spec, SpawnedFds* fds, pid_t* pid);

}  // namespace kz::util::internal
