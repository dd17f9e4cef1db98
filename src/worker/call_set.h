// The seam over the child-process layer (issue 20): verify and compile start, answer,
// cancel and collect calls of the Python worker through a CallSet, never through
// util::ProcessSet directly. The real sets (process_calls.h) run `python -m kz_worker`
// children; the scripted fake (tests/unit/scripted_worker.h) plays them from scripts, so
// the logic above this layer is tested with no process and no sleep.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/subprocess.h"
#include "worker/worker_client.h"

namespace kz::worker {

// How a call's child is driven; both off: the request goes in at start, the frames come
// back with its end.
struct CallMode {
  bool hold = false;    // parked (torch imported, no request, no wall limit) until Release
  bool stream = false;  // frames taken while it runs (TakeChannel) and answered (Send);
                        // WaitAny also returns, with nothing finished, when some arrive
};

// Worker calls driven from one poll loop; each child in its own process group. Results are
// util::ProcessResults with the raw channel bytes (for ParseWorkerReply) — of a `stream`
// call, only the bytes not yet taken. Thread-safety: a CallSet belongs to one thread.
class CallSet {
 public:
  using Id = int;
  virtual ~CallSet() = default;  // kills every child still running
  // Starts `call`. A failure to start is reported by the next WaitAny (kSpawnFailed).
  virtual Id Start(const WorkerCall& call, CallMode mode = {}) = 0;
  // Until at least one call has ended or `timeout_ms` passed (-1: no timeout); the ended ones.
  virtual std::vector<std::pair<Id, util::ProcessResult>> WaitAny(int timeout_ms) = 0;
  // A held call gets `call`'s request and wall limit (its environment and jail stay those
  // of its start; `call.jail` must be that jail). False when it is not held or has ended.
  virtual bool Release(Id id, const WorkerCall& call) = 0;
  virtual bool Send(Id id, std::string_view frame_bytes) = 0;  // to a running call's channel
  virtual bool ExtendWallLimit(Id id, double seconds) = 0;     // time spent waiting on others
  virtual std::string TakeChannel(Id id) = 0;                  // a stream call's bytes so far
  virtual int GroupId(Id id) const = 0;                        // its process group (GPU gate signals), or -1
  virtual size_t running() const = 0;                          // started and not yet returned by WaitAny
  virtual void KillAll() = 0;                                  // ended calls are returned by the next WaitAny
};

// Makes CallSets. Thread-safety: NewSet may be called from any thread.
class CallLauncher {
 public:
  virtual ~CallLauncher() = default;
  // A set whose calls run `config`'s worker (interpreter, package, sandbox, priority).
  virtual std::unique_ptr<CallSet> NewSet(const WorkerConfig& config) const = 0;
};
using LauncherPtr = std::shared_ptr<const CallLauncher>;

// The real launcher (process_calls.cc): one shared, stateless instance.
LauncherPtr ProcessLauncher();

}  // namespace kz::worker
