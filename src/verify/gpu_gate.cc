#include "verify/gpu_gate.h"

#include <algorithm>

namespace kz::verify {

GpuGate::GpuGate(uint64_t budget_bytes, int max_shared) : budget_(budget_bytes), max_shared_(std::max(1, max_shared)) {}

bool GpuGate::Waiting(Holder h) const {
  return std::any_of(queue_.begin(), queue_.end(), [&](const Ask& a) { return a.holder == h; });
}

bool GpuGate::Fits(const Ask& a) const {
  if (exclusive_) return false;
  if (a.mode == Mode::kExclusive) return held_.empty();
  if (held_.empty()) return true;  // alone, whatever its size
  if (shared_ >= max_shared_) return false;
  return budget_ == 0 || bytes_ + a.bytes <= budget_;
}

// Grants from the head of the queue while the head fits: arrival order, and a waiting
// exclusive (or a shared that does not fit) holds everything behind it.
std::vector<GpuGate::Holder> GpuGate::Admit() {
  std::vector<Holder> granted;
  while (!queue_.empty() && Fits(queue_.front())) {
    Ask a = queue_.front();
    queue_.pop_front();
    held_[a.holder] = a;
    if (a.mode == Mode::kExclusive) exclusive_ = true;
    else ++shared_;
    bytes_ += a.bytes;
    granted.push_back(a.holder);
  }
  return granted;
}

std::vector<GpuGate::Holder> GpuGate::Request(Holder h, Mode mode, uint64_t bytes) {
  std::vector<Holder> granted = Release(h);
  queue_.push_back({h, mode, bytes});
  std::vector<Holder> more = Admit();
  granted.insert(granted.end(), more.begin(), more.end());
  return granted;
}

std::vector<GpuGate::Holder> GpuGate::Release(Holder h) {
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](const Ask& a) { return a.holder == h; }), queue_.end());
  if (auto it = held_.find(h); it != held_.end()) {
    if (it->second.mode == Mode::kExclusive) exclusive_ = false;
    else --shared_;
    bytes_ -= it->second.bytes;
    held_.erase(it);
  }
  return Admit();
}

}  // namespace kz::verify
