// The GPU gate of one GPU (issue 18, docs/throughput.md): several samples' children share a
// GPU for their correctness stages while a sample being timed has it to itself.
//
// Holders (one per child) ask at the worker's stage boundaries — its safe points — for
//   kShared     the correctness and extra-check stages: any number at once, within the
//               GPU-memory budget (each holder's footprint bytes) and `max_shared`;
//   kExclusive  the timing stage: no other holder at all.
// A child is never preempted inside a stage: a pending exclusive request waits for the shared
// holders to reach their next boundary (they release there), and while it waits no new shared
// holder is admitted (writer preference), so timing waits at most one correctness stage.
// Requests are served in arrival order otherwise (an exclusive request never overtakes an
// earlier one; a shared request that does not fit the memory budget waits, and keeps later
// shared ones behind it, so a large sample cannot starve). A holder larger than the whole
// budget is admitted alone.
//
// The gate is pure bookkeeping for the supervisor's poll loop: no threads, no blocking.
// Request/Release/Drop return the holders granted as a consequence, in grant order, for the
// loop to tell. Drop is for a child that ended (crashed, killed at its limit): whatever it
// held or asked for is gone.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace kz::verify {

class GpuGate {
 public:
  using Holder = uint64_t;
  enum class Mode { kShared, kExclusive };

  // budget_bytes: GPU memory the holders' footprints may sum to (0: no memory bound);
  // max_shared: most shared holders at once (>= 1).
  GpuGate(uint64_t budget_bytes, int max_shared);

  // Asks for `mode` with `bytes` of footprint. A holder has at most one request or hold at a
  // time: asking again first releases what it had. Returns the holders granted now (this one
  // among them when it was granted at once).
  std::vector<Holder> Request(Holder h, Mode mode, uint64_t bytes);
  // Gives back a hold or withdraws a request; returns holders granted in consequence.
  std::vector<Holder> Release(Holder h);
  std::vector<Holder> Drop(Holder h) { return Release(h); }

  bool Holds(Holder h) const { return held_.count(h) > 0; }
  bool Waiting(Holder h) const;
  int shared_holders() const { return shared_; }
  bool exclusive_held() const { return exclusive_; }
  uint64_t bytes_held() const { return bytes_; }
  size_t queued() const { return queue_.size(); }

 private:
  struct Ask {
    Holder holder;
    Mode mode;
    uint64_t bytes;
  };
  bool Fits(const Ask& a) const;
  std::vector<Holder> Admit();

  uint64_t budget_;
  int max_shared_;
  std::deque<Ask> queue_;
  std::map<Holder, Ask> held_;
  int shared_ = 0;
  bool exclusive_ = false;
  uint64_t bytes_ = 0;
};

}  // namespace kz::verify
