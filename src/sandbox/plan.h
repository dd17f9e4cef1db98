// The mount plan of a Jail: built in the parent (allocates), executed in the child by
// enter.cc (does not allocate). Internal to kz::sandbox.
#pragma once
#include <linux/filter.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/sandbox.h"

namespace kz::sandbox {

struct Jail::Op {
  enum Kind { kMkdir, kTouch, kBind, kTmpfs, kProc, kSymlink, kOverlay } kind;
  std::string target;   // full path under the new root (or the link's path)
  std::string source;   // bind source; tmpfs or overlay options; symlink contents
  bool read_only = false;
  bool optional = false;  // a failure is ignored (symlinks, mount points that may exist)
  bool owned = false;     // chowned to the sandbox's user (the scratch's directories)
};

struct Jail::Plan {
  std::string root;              // host path of the new root's mount point
  std::vector<Op> ops;
  uid_t uid = 0, gid = 0;        // ids inside (and outside) after the drop
  bool map_root = false;         // supervisor is root: inside 0 maps to 0 during set-up
  bool namespaces = true, pid = true, net = true, seccomp = true;
  Limits limits;
  std::string scratch;           // inside path of the private tmpfs
  std::vector<sock_filter> filter;  // seccomp program (seccomp.h)
};

// Builds the plan for `policy` with the new root mounted at `root` and the staged inputs in
// `inputs` (a host directory, visible read-only at its own path).
Jail::Plan BuildPlan(const Policy& policy, const std::string& root, const std::string& inputs);

// Component by component: symlinks met on the way are recorded as (path, contents) and
// followed. Returns the real path, or "" when it does not exist.
std::string FollowPath(const std::string& path, std::vector<std::pair<std::string, std::string>>* links);

}  // namespace kz::sandbox
