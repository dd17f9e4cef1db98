// Internal to util: starting one child for ProcessSet — its pipes, the protocol channel
// (fd 3, or stdin and stdout with `stdio_channel`), its process group, and its jail
// (clone() into the jail's namespaces, the id maps written by the parent, then exec).
#pragma once
#include <sys/types.h>

#include <string>

#include "util/subprocess.h"

namespace kz::util::internal {

struct SpawnedFds {
  int out = -1;   // the child's stdout (-1 with `stdio_channel`: stdout is the channel)
  int err = -1;   // the child's stderr
  int chan = -1;  // the parent's end of the channel, or -1
};

// Forks (or clones into spec.jail) and execs spec.argv. On success fills *fds (non-blocking,
// close-on-exec, owned by the caller) and *pid, and returns "". On failure returns why,
// with nothing left open and no child left behind.
std::string Spawn(const ProcessSpec& spec, SpawnedFds* fds, pid_t* pid);

}  // namespace kz::util::internal
