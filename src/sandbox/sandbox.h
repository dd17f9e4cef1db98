// The OS sandbox every child that runs candidate code starts in (docs/sandbox.md).
//
// A Jail is built in the supervisor before the fork: the mount plan (every path resolved,
// symlinks recreated), the seccomp program and the limits. util::ProcessSet clones the child
// into new user, mount, PID, network, IPC and UTS namespaces, writes its id maps
// (AfterClone) and the child applies the plan (Enter) before exec: a fresh tmpfs root with
// the system, the Python environment and the named inputs bound read-only, a private
// size-limited tmpfs scratch (its TMPDIR, HOME, extension and Triton caches), its own /proc,
// a minimal /dev (GPU nodes only when asked for), no network, resource limits, no
// capabilities, no_new_privs and a seccomp filter. The scratch dies with the child's last
// process; the host-side stage directory (mount point, staged inputs) is removed when the
// Jail is destroyed, i.e. once ProcessSet has collected the child.
//
// Owns: namespaces, mounts, limits, seccomp. Depends on util (the ChildJail interface) and
// libc only. Thread-safety: a Jail is immutable after Create except Stage(), which its one
// owner calls (the prestarted child's inputs, before ProcessSet::Release).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/subprocess.h"

namespace kz::sandbox {

enum class Mode { kOff, kBestEffort, kRequire };
bool ParseMode(const std::string& text, Mode* mode);
const char* ModeName(Mode mode);

// The mechanisms, each of which the host may lack.
struct Features {
  bool namespaces = true;  // user + mount (+ IPC, UTS): without them nothing else applies
  bool pid = true;         // own PID namespace with a fresh /proc
  bool net = true;         // own network namespace (loopback only, down)
  bool seccomp = true;     // the syscall filter (seccomp.h)
  bool operator==(const Features&) const = default;
};
std::vector<std::string> Missing(const Features& f);

struct Limits {
  uint64_t nproc = 1024;               // processes + threads of the sandbox's user in it
  uint64_t nofile = 4096;              // open files
  uint64_t fsize_bytes = 4ull << 30;   // largest file written
  uint64_t scratch_bytes = 4ull << 30; // its tmpfs scratch (TMPDIR, HOME, builds, caches)
  uint64_t shm_bytes = 2ull << 30;     // its /dev/shm
};

// What one child may see and use.
struct Policy {
  std::vector<std::string> read_only;  // host paths visible read-only at the same path
  // Host directories visible read-write. Under a root supervisor the child runs as nobody:
  // `writable` ones are handed to it for the child's life (chowned back, recursively, when
  // the Jail goes); `shared_writable` ones (used by many children at once) are handed over
  // for good.
  std::vector<std::string> writable;
  std::vector<std::string> shared_writable;
  std::vector<std::string> devices;    // extra /dev nodes (e.g. "nvidia0"), bound when present
  std::string stage_base;              // host dir for the stage (mount point, staged inputs)
  // A host Triton cache seeded by trusted runs: the lower layer of an overlay at the child's
  // TRITON_CACHE_DIR whose upper layer is its scratch ("" or absent: a private empty cache).
  std::string triton_cache;
  Features features;                   // what to apply (the host's, from Probe)
  Limits limits;
};

// The system directories every child sees read-only (/usr, /etc, /opt, the /lib links …).
std::vector<std::string> SystemPaths();

class Jail : public util::ChildJail {
 public:
  // Never null; a failure (no stage directory) is kept in Error() and refuses the spawn.
  static std::shared_ptr<Jail> Create(const Policy& policy);
  ~Jail() override;

  std::string Error() const override { return error_; }
  unsigned long CloneFlags() const override;
  std::string AfterClone(pid_t child) const override;
  void Enter() const override;

  // Copies (or hard-links) a host file into the stage's input directory as in/<n>/<its name>,
  // visible read-only in the child at the returned path (the same base name as the host
  // file); works after the child started (a prestarted child).
  std::string Stage(const std::string& host_path, std::string* err);
  const std::string& scratch() const { return scratch_; }  // path of the private tmpfs inside
  const Policy& policy() const { return policy_; }

  struct Op;  // one step of the mount plan (plan.cc)
  struct Plan;

 private:
  Jail() = default;
  void HandOver(const Plan& plan);
  Policy policy_;
  std::string error_, stage_, root_, inputs_, scratch_;
  std::shared_ptr<const Plan> plan_;
  int staged_ = 0;
  struct Handed {
    std::string path;
    uid_t uid;
    gid_t gid;
  };
  std::vector<Handed> handed_;  // writable dirs chowned to the sandbox user, restored by ~Jail
};

// What this host supports, found once per stage_base by starting `true` in a jail with all
// features, then with fewer. Thread-safe (memoized under a mutex).
struct HostSupport {
  Features features;       // the ones that worked
  std::string detail;      // the first failure's message, "" when everything works
  bool complete() const { return features == Features{}; }
};
HostSupport Probe(const std::string& stage_base);

// Start-up check for a mode. kRequire and a host lacking a mechanism: false with *err naming
// it. kBestEffort: true; *features holds what will be applied. kOff: true, nothing applied.
bool Check(Mode mode, const std::string& stage_base, Features* features, std::string* err);

// `stages.sandbox` of a verdict (docs/verdict.md).
nlohmann::json Describe(Mode mode, const Features& applied, const Limits& limits);

}  // namespace kz::sandbox
