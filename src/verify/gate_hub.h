// The GPU gate shared by the threads of one Verifier that run children on the same GPU at
// once (docs/throughput.md): a mutex around GpuGate, and grants kept per holder until the
// thread that owns that holder's child takes them and tells its child.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "util/subprocess.h"
#include "verify/gpu_gate.h"

namespace kz::verify {

class GateHub {
 public:
  GateHub(uint64_t budget_bytes, int max_shared) : gate_(budget_bytes, max_shared) {}

  GpuGate::Holder NewHolder();
  // A gate frame's `want` from h: "shared", "exclusive" or "release"; false for anything else.
  bool Handle(GpuGate::Holder h, const std::string& want, uint64_t bytes);
  // h's child ended: whatever it held or asked for is released.
  void Drop(GpuGate::Holder h);
  // True once per grant made to h (by any thread's call).
  bool TakeGrant(GpuGate::Holder h);
  int max_shared_seen() const;  // the most shared holders at once so far (for tests and metrics)

 private:
  void Note(const std::vector<GpuGate::Holder>& granted);
  mutable std::mutex mu_;
  GpuGate gate_;
  std::set<GpuGate::Holder> granted_;
  GpuGate::Holder next_ = 1;
  int max_shared_seen_ = 0;
};

// Waits for child `id` of `set` (a run child started with stream_channel and options.gate):
// answers its gate frames (only those carrying `token`) through `hub`, polling every few
// milliseconds for grants other threads made, and drops it from the gate when it ends. The
// result holds every channel byte, for worker::ParseWorkerReply. `cancelled` (may be empty)
// is polled: once true the child is killed.
util::ProcessResult WaitGated(util::ProcessSet& set, util::ProcessSet::Id id, const std::string& token, GateHub& hub,
                              const std::function<bool()>& cancelled);

}  // namespace kz::verify
