#include "verify/run_channel.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "util/frame.h"
#include "worker/worker_client.h"

namespace kz::verify {
using nlohmann::json;

namespace {
constexpr int kGatePollMs = 5;      // how soon a grant made by another thread reaches the child
constexpr int kCancelPollMs = 100;  // how soon a cancellation kills it

std::string Text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Encode(const json& j) { return util::EncodeFrame(j.dump(-1, ' ', false, json::error_handler_t::replace)); }

// The frames of this call (its token) that ask for something: gate requests and judge requests.
// Keeps at most `max_bytes` of the channel: a child that writes more has lost its channel.
class Requests {
 public:
  Requests(worker::CallSet& set, worker::CallSet::Id id, const std::string& token, GateHub* hub, GpuGate::Holder holder,
           RunJudges* judges, size_t max_bytes)
      : set_(set), id_(id), token_(token), hub_(hub), holder_(holder), judges_(judges), max_bytes_(max_bytes) {}

  // Answers the requests among `bytes` (more of the channel). False once the channel has
  // exceeded max_bytes: the bytes past it are dropped and nothing more is answered.
  bool Take(std::string bytes) {
    if (!Keep(&bytes)) return false;
    decoder_.Feed(bytes.data(), bytes.size());
    for (std::string payload; decoder_.Pop(&payload);) {
      auto j = worker::ParseFrameJson(payload);
      if (j.is_discarded() || !j.is_object() || Text(j, "token") != token_) continue;  // forged: ignored here
      std::string type = Text(j, "type");
      if (type == "gate" && hub_) {
        auto bytes_it = j.find("bytes");
        uint64_t wanted = bytes_it != j.end() && bytes_it->is_number_unsigned() ? bytes_it->get<uint64_t>() : 0;
        hub_->Handle(holder_, Text(j, "want"), wanted);
      } else if (type == "judge") {
        json reply = judges_ ? judges_->Answer(j)
                             : json{{"type", "judge"}, {"verdict", "invalid"}, {"reason", "no judge for this call"}};
        set_.Send(id_, Encode(reply));
      }
    }
    return true;
  }

  // Adds what fits of *bytes to `received` (*bytes: what was kept); false, and `overflowed`
  // set, when some did not fit.
  bool Keep(std::string* bytes) {
    if (overflowed || received.size() + bytes->size() > max_bytes_) {
      bytes->resize(overflowed ? 0 : max_bytes_ - received.size());
      overflowed = true;
    }
    received += *bytes;
    return !overflowed;
  }

  std::string received;     // every byte up to max_bytes, for worker::ParseWorkerReply
  bool overflowed = false;  // the child wrote more than max_bytes

 private:
  worker::CallSet& set_;
  worker::CallSet::Id id_;
  const std::string& token_;
  GateHub* hub_;
  GpuGate::Holder holder_;
  RunJudges* judges_;
  size_t max_bytes_;
  util::FrameDecoder decoder_;
};
}  // namespace

util::ProcessResult WaitRunChild(worker::CallSet& set, worker::CallSet::Id id, const std::string& token, GateHub* hub,
                                 RunJudges* judges, const std::function<bool()>& cancelled, double* held_s,
                                 size_t max_channel_bytes) {
  const GpuGate::Holder holder = hub ? hub->NewHolder() : 0;
  if (hub) hub->Register(holder, set.GroupId(id));
  const std::string grant = Encode(json{{"type", "gate"}, {"granted", true}});
  Requests requests(set, id, token, hub, holder, judges, max_channel_bytes);
  double held = 0;
  auto last = std::chrono::steady_clock::now();
  for (;;) {
    bool was_held = hub && hub->Held(holder);  // over the poll that follows (grants are taken below it)
    auto done = set.WaitAny(hub ? kGatePollMs : cancelled ? kCancelPollMs : -1);
    auto now = std::chrono::steady_clock::now();
    if (was_held && hub->Held(holder)) {
      double dt = std::chrono::duration<double>(now - last).count();
      held += dt;
      hub->AddWait(dt);
      set.ExtendWallLimit(id, dt);
    }
    last = now;
    if (!requests.overflowed && !requests.Take(set.TakeChannel(id))) set.KillAll();  // reported below
    for (auto& [finished, result] : done) {
      if (finished != id) continue;
      if (hub) hub->Drop(holder);
      if (held_s) *held_s = held;
      requests.Keep(&result.channel_data);  // the last bytes: the child has ended, nothing to answer
      result.channel_data = std::move(requests.received);
      if (requests.overflowed) {
        result.channel_truncated = true;
        result.stderr_tail += "\nkz: the child wrote more than " + std::to_string(max_channel_bytes) +
                              " bytes to its channel and was killed\n";
      }
      return std::move(result);
    }
    if (hub && hub->TakeGrant(holder)) set.Send(id, grant);
    if (cancelled && cancelled()) set.KillAll();
  }
}

}  // namespace kz::verify
