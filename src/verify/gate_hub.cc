#include "verify/gate_hub.h"

#include <signal.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "util/frame.h"

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
  if (want == "shared") Note(gate_.Request(h, GpuGate::Mode::kShared, bytes));
  else if (want == "exclusive") Note(gate_.Request(h, GpuGate::Mode::kExclusive, bytes));
  else if (want == "release") Note(gate_.Release(h));
  else return false;
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

util::ProcessResult WaitGated(util::ProcessSet& set, util::ProcessSet::Id id, const std::string& token, GateHub& hub,
                              const std::function<bool()>& cancelled, double* held_s) {
  constexpr int kPollMs = 5;  // how soon a grant made by another thread reaches this child
  const GpuGate::Holder holder = hub.NewHolder();
  hub.Register(holder, set.GroupId(id));
  const std::string grant = util::EncodeFrame(nlohmann::json{{"type", "gate"}, {"granted", true}}.dump());
  std::string received;
  util::FrameDecoder decoder;
  auto take = [&](const std::string& bytes) {
    received += bytes;
    decoder.Feed(bytes.data(), bytes.size());
    for (std::string payload; decoder.Pop(&payload);) {
      auto j = nlohmann::json::parse(payload, nullptr, false);
      if (j.is_discarded() || !j.is_object() || j.value("type", "") != "gate" || !j.contains("token") ||
          !j["token"].is_string() || j["token"].get<std::string>() != token)
        continue;  // events and results are parsed at the end; a forged gate frame is ignored
      uint64_t bytes_wanted = j.contains("bytes") && j["bytes"].is_number_unsigned() ? j["bytes"].get<uint64_t>() : 0;
      hub.Handle(holder, j.value("want", ""), bytes_wanted);
    }
  };
  double held = 0;
  auto last = std::chrono::steady_clock::now();
  for (;;) {
    bool was_held = hub.Held(holder);  // over the poll that follows (grants are taken below it)
    auto done = set.WaitAny(kPollMs);
    auto now = std::chrono::steady_clock::now();
    if (was_held && hub.Held(holder)) {
      double dt = std::chrono::duration<double>(now - last).count();
      held += dt;
      hub.AddWait(dt);
      set.ExtendWallLimit(id, dt);
    }
    last = now;
    take(set.TakeChannel(id));
    for (auto& [finished, result] : done) {
      if (finished != id) continue;
      hub.Drop(holder);
      if (held_s) *held_s = held;
      result.channel_data = received + result.channel_data;
      return std::move(result);
    }
    if (hub.TakeGrant(holder)) set.Send(id, grant);
    if (cancelled && cancelled()) set.KillAll();
  }
}

}  // namespace kz::verify
