// Child processes driven from one poll loop (after ninja's SubprocessSet).
//
// Each child runs in its own process group; on its deadline, when its group's resident
// memory passes the limit, or once it has exited, the whole group is sent SIGKILL (nvcc
// starts cicc and ptxas; candidates start threads and processes). stdout and stderr are
// drained continuously and only a bounded tail is kept, so a child that prints gigabytes
// costs nothing. An optional channel (a socketpair end at fd 3 in the child, announced in
// KZ_PROTOCOL_FD) carries the structured protocol. A long-lived child (the trainer backend)
// can instead have the channel as its stdin and stdout (`stdio_channel`) and exchange frames
// while it runs (`stream_channel`: Send(), TakeChannel()).
//
// Thread-safety: a ProcessSet belongs to the thread that created it.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kz::util {

// An OS sandbox for one child, prepared in the parent before the fork (every path, string
// and filter already built) and applied in the child between clone() and exec. Implemented
// by kz::sandbox (docs/sandbox.md); util only calls it. Thread-safety: const after creation.
class ChildJail {
 public:
  virtual ~ChildJail() = default;
  virtual std::string Error() const = 0;          // "" or why this jail cannot start a child
  virtual unsigned long CloneFlags() const = 0;   // CLONE_NEW* for the child's clone()
  // In the parent right after clone(), before the child may go on: its uid/gid maps.
  virtual std::string AfterClone(pid_t child) const = 0;
  // In the child (async-signal-safe only): namespaces set up, limits, seccomp. On failure it
  // writes "kz-sandbox: <step>: <error>" to fd 2 and calls _exit(kSandboxExit).
  virtual void Enter() const = 0;
};
constexpr int kSandboxExit = 125;  // a child whose sandbox could not be set up

struct ProcessSpec {
  std::vector<std::string> argv;                            // argv[0] looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;     // set on top of this environment
  std::vector<std::string> unset_env;                       // removed from the environment
  std::string cwd;                                          // "" = inherit
  bool channel = false;                                     // socketpair at fd 3
  std::string channel_input;                                // written to the channel at start
  double wall_limit_s = 0;                                  // 0 = no limit
  uint64_t max_rss_bytes = 0;                               // process-group RSS limit; 0 = none
  size_t tail_bytes = 8192;                                 // kept of stdout and of stderr
  size_t max_channel_bytes = 64u << 20;                     // more is dropped and flagged
  bool hold = false;  // parked: no channel input and no wall limit until ProcessSet::Release
  int nice = 0;       // added to the child's nice value (> 0: yields the CPU to its parent's threads)
  bool idle_class = false;  // SCHED_IDLE: runs only when no normal thread wants the CPU (inherited)
  bool stdio_channel = false;  // the channel is the child's stdin and stdout (one socket), not fd 3;
                               // needs `channel`; stdout then has no tail
  bool stream_channel = false;  // channel bytes are taken with TakeChannel() while the child runs,
                                // and WaitAny() also returns (with nothing finished) when some arrive
  std::shared_ptr<const ChildJail> jail = nullptr;  // null: no sandbox; kept until the child is collected
};

enum class ProcessEnd { kExited, kSignaled, kTimedOut, kMemoryExceeded, kSpawnFailed };

struct ProcessResult {
  ProcessEnd end = ProcessEnd::kSpawnFailed;
  int exit_code = -1;          // for kExited
  int signal = 0;              // for kSignaled (and the kill signal for timeouts)
  std::string stdout_tail, stderr_tail;
  uint64_t stdout_bytes = 0, stderr_bytes = 0;
  std::string channel_data;    // raw bytes the child wrote to the channel
  bool channel_truncated = false;
  double wall_s = 0;
  uint64_t peak_rss_bytes = 0;
  std::string spawn_error;     // for kSpawnFailed
};

const char* ProcessEndName(ProcessEnd end);
std::string SignalName(int sig);

class ProcessSet {
 public:
  using Id = int;
  ProcessSet();
  ~ProcessSet();  // kills every group still running
  ProcessSet(const ProcessSet&) = delete;
  ProcessSet& operator=(const ProcessSet&) = delete;

  // Starts a child. A spawn failure is reported by the next WaitAny() as kSpawnFailed.
  Id Start(ProcessSpec spec);

  // Polls until at least one child has finished (its group killed, its pipes drained) or
  // `timeout_ms` passes (-1: no timeout). Returns the finished children.
  std::vector<std::pair<Id, ProcessResult>> WaitAny(int timeout_ms = -1);

  // A child started with `hold` (e.g. a worker that has imported its libraries and waits
  // for its request): sets its channel input and wall limit and starts its clock now
  // (ProcessResult::wall_s counts from here). False, and nothing changes, when the child
  // is unknown, was not held, or has already exited or failed to spawn: start a new one.
  bool Release(Id id, std::string channel_input, double wall_limit_s);

  // A child with a channel: queues `bytes` to be written to it (by WaitAny()). False when
  // the child is unknown, has no channel or has exited.
  bool Send(Id id, std::string_view bytes);
  // Adds `seconds` to a running child's wall limit (time it spent waiting on something
  // outside its control, e.g. the GPU gate, docs/throughput.md). False when the child is
  // unknown, reaped, already forced to end, or has no wall limit.
  bool ExtendWallLimit(Id id, double seconds);
  // A `stream_channel` child: the channel bytes received so far (then cleared).
  std::string TakeChannel(Id id);
  // Kills the child's group now; WaitAny() reports it as kTimedOut (a deadline the caller
  // keeps itself, e.g. per request). False when the child is unknown or already reaped.
  bool Expire(Id id);

  // The child's process id, which is also its process group's (verify::GateHub signals the
  // group around another child's timing, docs/throughput.md), or -1 when unknown or reaped.
  int GroupId(Id id) const;

  // Children started and not yet returned by WaitAny().
  size_t running() const;
  void KillAll();

 private:
  struct Child;
  void Reap();
  void EnforceLimits();
  std::vector<std::pair<Id, ProcessResult>> CollectFinished();
  std::vector<std::unique_ptr<Child>> children_;
  Id next_id_ = 1;
  std::chrono::steady_clock::time_point last_rss_scan_{};
};

// Convenience: runs one child to completion.
ProcessResult RunProcess(ProcessSpec spec);

}  // namespace kz::util
