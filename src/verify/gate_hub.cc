#include "verify/gate_hub.h"

#include <signal.h>

#include <algorithm>

namespace kz::verify {

GpuGate::Holder GateHub::NewHolder() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_++;
}

void GateHub::Register(GpuGate::Holder h, int group) {
  std::lock_guard<std::mutex> lock(mu_);
  if (group > 0) groups_[h] = group;
}

void GateHub::Note(const std::vector<GpuGate::Holder>& granted) {
  granted_.insert(granted.begin(), granted.end());
  ran_.insert(granted.begin(), granted.end());
  if (gate_.exclusive_held())
    for (auto h : granted) exclusive_grants_ += gate_.Holds(h) ? 1 : 0;
  max_shared_seen_ = std::max(max_shared_seen_, gate_.shared_holders());
  Enforce();
}

// A group is signalled only while its holder is registered; the owning thread drops it right
// after reaping its child, so a signal can reach a reused pid only in that narrow window.
void GateHub::Enforce() {
  const bool exclusive = gate_.exclusive_held();
  for (auto it = stopped_.begin(); it != stopped_.end();) {  // continue who may run now
    if (exclusive && !gate_.Holds(*it)) {
      ++it;
      continue;
    }
    if (auto g = groups_.find(*it); g != groups_.end()) ::kill(-g->second, SIGCONT);
    it = stopped_.erase(it);
  }
  if (exclusive)
    for (const auto& [h, group] : groups_)
      if (!gate_.Holds(h) && ran_.count(h) && !stopped_.count(h) && ::kill(-group, SIGSTOP) == 0) stopped_.insert(h);
}

bool GateHub::Handle(GpuGate::Holder h, const std::string& want, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (want == "shared")
    Note(gate_.Request(h, GpuGate::Mode::kShared, bytes));
  else if (want == "exclusive")
    Note(gate_.Request(h, GpuGate::Mode::kExclusive, bytes));
  else if (want == "release")
    Note(gate_.Release(h));
  else
    return false;
  return true;
}

void GateHub::Drop(GpuGate::Holder h) {
  std::lock_guard<std::mutex> lock(mu_);
  granted_.erase(h);
  groups_.erase(h);
  ran_.erase(h);
  stopped_.erase(h);
  Note(gate_.Drop(h));
}

bool GateHub::TakeGrant(GpuGate::Holder h) {
  std::lock_guard<std::mutex> lock(mu_);
  return granted_.erase(h) > 0;
}

bool GateHub::Stopped(GpuGate::Holder h) const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopped_.count(h) > 0;
}

bool GateHub::Held(GpuGate::Holder h) const {
  std::lock_guard<std::mutex> lock(mu_);
  return gate_.Waiting(h) || granted_.count(h) > 0 || stopped_.count(h) > 0;
}

void GateHub::AddWait(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  held_s_ += seconds;
}

GateHub::Stats GateHub::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {gate_.shared_holders(), gate_.exclusive_held(), gate_.queued(), gate_.bytes_held(),
          max_shared_seen_,       exclusive_grants_,      held_s_};
}

int GateHub::max_shared_seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_shared_seen_;
}

}  // namespace kz::verify
