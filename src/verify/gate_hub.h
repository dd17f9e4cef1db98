// The GPU gate shared by the threads of one Verifier that run children on the same GPU at
// once (docs/throughput.md): a mutex around GpuGate, and grants kept per holder until the
// thread that owns that holder's child takes them and tells its child.
//
// Enforcement: while one holder has the exclusive hold (its timing), the process groups of
// the other registered holders that have been granted before (their candidate code is loaded,
// so a thread of it could launch kernels) are stopped with SIGSTOP, and continued with SIGCONT
// once the exclusive hold ends. They are then at a safe point (waiting for a grant, or done
// with the GPU), so nothing of the worker's own is interrupted.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "verify/gpu_gate.h"

namespace kz::verify {

class GateHub {
 public:
  GateHub(uint64_t budget_bytes, int max_shared) : gate_(budget_bytes, max_shared) {}

  GpuGate::Holder NewHolder();
  // The process group of h's child (for the enforcement); <= 0: none.
  void Register(GpuGate::Holder h, int group);
  // A gate frame's `want` from h: "shared", "exclusive" or "release"; false for anything else.
  bool Handle(GpuGate::Holder h, const std::string& want, uint64_t bytes);
  // h's child ended: whatever it held or asked for is released.
  void Drop(GpuGate::Holder h);
  // True once per grant made to h (by any thread's call).
  bool TakeGrant(GpuGate::Holder h);
  int max_shared_seen() const;            // the most shared holders at once so far (for tests and metrics)
  bool Stopped(GpuGate::Holder h) const;  // h's group is stopped for another's timing
  // h's child cannot go on because of the gate: its request is not granted yet, the grant
  // has not reached it, or it is stopped for another's timing. WaitRunChild (run_channel.h)
  // does not count this time against the child's wall limit.
  bool Held(GpuGate::Holder h) const;
  void AddWait(double seconds);  // a child's time held by the gate (Held), for Stats

  // A snapshot for /metrics (kz serve, docs/throughput.md).
  struct Stats {
    int shared = 0;           // shared holders now
    bool exclusive = false;   // a holder is being timed now
    size_t queued = 0;        // requests waiting
    uint64_t bytes_held = 0;  // the shared holders' footprints, summed
    int max_shared_seen = 0;
    uint64_t exclusive_grants = 0;  // timings granted so far
    double held_s = 0;              // children's time held by the gate so far, summed
  };
  Stats stats() const;

 private:
  void Note(const std::vector<GpuGate::Holder>& granted);
  void Enforce();  // stop or continue the others' groups as the exclusive hold begins or ends
  mutable std::mutex mu_;
  std::map<GpuGate::Holder, int> groups_;  // registered holders' process groups
  std::set<GpuGate::Holder> ran_;          // granted at least once
  std::set<GpuGate::Holder> stopped_;      // SIGSTOPped for the current exclusive hold
  GpuGate gate_;
  std::set<GpuGate::Holder> granted_;
  GpuGate::Holder next_ = 1;
  int max_shared_seen_ = 0;
  uint64_t exclusive_grants_ = 0;
  double held_s_ = 0;
};

}  // namespace kz::verify
