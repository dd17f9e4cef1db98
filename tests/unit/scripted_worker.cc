#include "scripted_worker.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "util/frame.h"

namespace kz::testing_support {
using nlohmann::json;
using Clock = std::chrono::steady_clock;

Script& Script::Frame(json frame) {
  Step s;
  s.kind = Kind::kFrame;
  s.frame = std::move(frame);
  steps_.push_back(std::move(s));
  return *this;
}
Script& Script::Result(json fields) {
  fields["type"] = "result";
  return Frame(std::move(fields));
}
Script& Script::AwaitInput() {
  steps_.push_back(Step{});
  steps_.back().kind = Kind::kAwaitInput;
  return *this;
}
Script& Script::AwaitLatch(std::string name) {
  steps_.push_back(Step{});
  steps_.back().kind = Kind::kAwaitLatch;
  steps_.back().text = std::move(name);
  return *this;
}
Script& Script::Hang() {
  steps_.push_back(Step{});
  steps_.back().kind = Kind::kHang;
  return *this;
}
Script& Script::Exit(int code, std::string stderr_tail) {
  End(util::ProcessEnd::kExited, std::move(stderr_tail));
  steps_.back().code = code;
  return *this;
}
Script& Script::End(util::ProcessEnd end, std::string stderr_tail) {
  steps_.push_back(Step{});
  steps_.back().kind = Kind::kEnd;
  steps_.back().text = std::move(stderr_tail);
  steps_.back().end = end;
  return *this;
}

std::string SeenCall::Env(const std::string& name) const {
  std::string value = "<unset>";
  for (const auto& [k, v] : call.env)
    if (k == name) value = v;
  return value;
}

// Shared by the launcher and its sets; every field under mu.
struct ScriptedLauncher::State {
  std::mutex mu;
  std::condition_variable cv;
  Scriptor scriptor;
  std::vector<SeenCall> calls;
  std::set<std::string> open;
  std::map<std::string, size_t> playing, peak;
  size_t alive = 0;
};

namespace {
using State = ScriptedLauncher::State;

struct Child {
  size_t seen = 0;  // index in State::calls
  Script script;
  size_t pc = 0;
  bool held = false, ended = false, stream = false, fresh = false;
  std::vector<std::string> keys;  // its "op" and "op@<CUDA_VISIBLE_DEVICES>" counters while playing
  std::string out;                // channel bytes not yet taken
  util::FrameDecoder inbox;
  util::ProcessResult result;
  Clock::time_point last_progress = Clock::now();
};

class ScriptedCallSet final : public worker::CallSet {
 public:
  explicit ScriptedCallSet(std::shared_ptr<State> state) : state_(std::move(state)) {}
  ~ScriptedCallSet() override { KillAll(); }

  Id Start(const worker::WorkerCall& call, worker::CallMode mode) override {
    std::lock_guard lock(state_->mu);
    Id id = next_++;
    Child& c = children_[id];
    c.seen = state_->calls.size();
    c.stream = mode.stream;
    state_->calls.emplace_back();
    state_->calls.back().call = call;
    state_->calls.back().mode = mode;
    ++state_->alive;
    if (mode.hold)
      c.held = true;
    else
      Play(c, call);
    state_->cv.notify_all();
    return id;
  }

  std::vector<std::pair<Id, util::ProcessResult>> WaitAny(int timeout_ms) override {
    std::unique_lock lock(state_->mu);
    auto until = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 3600000 : timeout_ms);
    for (;;) {
      std::vector<std::pair<Id, util::ProcessResult>> done;
      bool fresh = false;
      for (auto it = children_.begin(); it != children_.end();) {
        Advance(it->second);
        fresh = fresh || std::exchange(it->second.fresh, false);
        if (!it->second.ended) {
          ++it;
          continue;
        }
        done.emplace_back(it->first, std::move(it->second.result));
        it = children_.erase(it);
      }
      if (!done.empty() || fresh || children_.empty()) return done;
      if (state_->cv.wait_until(lock, std::min(until, Clock::now() + std::chrono::seconds(1))) ==
              std::cv_status::timeout &&
          Clock::now() >= until)
        return done;
    }
  }

  bool Release(Id id, const worker::WorkerCall& call) override {
    std::lock_guard lock(state_->mu);
    auto it = children_.find(id);
    if (it == children_.end() || !it->second.held || it->second.ended) return false;
    Child& c = it->second;
    c.held = false;
    worker::WorkerCall as_run = call;
    as_run.env = state_->calls[c.seen].call.env;  // the child's environment is its start's
    state_->calls[c.seen].call = as_run;
    Play(c, as_run);
    state_->cv.notify_all();
    return true;
  }

  bool Send(Id id, std::string_view bytes) override {
    std::lock_guard lock(state_->mu);
    auto it = children_.find(id);
    if (it == children_.end() || it->second.ended) return false;
    it->second.inbox.Feed(bytes.data(), bytes.size());
    state_->cv.notify_all();
    return true;
  }

  bool ExtendWallLimit(Id id, double) override {
    std::lock_guard lock(state_->mu);
    auto it = children_.find(id);
    return it != children_.end() && !it->second.ended;
  }

  std::string TakeChannel(Id id) override {
    std::lock_guard lock(state_->mu);
    auto it = children_.find(id);
    return it == children_.end() ? std::string() : std::exchange(it->second.out, std::string());
  }

  int GroupId(Id) const override { return -1; }  // no process group: the GPU gate signals nothing

  size_t running() const override {
    std::lock_guard lock(state_->mu);
    return children_.size();
  }

  void KillAll() override {
    std::lock_guard lock(state_->mu);
    for (auto& [id, c] : children_)
      if (!c.ended) {
        state_->calls[c.seen].killed = true;
        Finish(c, util::ProcessEnd::kSignaled, 0, "");
      }
  }

 private:
  // Under state_->mu.
  void Play(Child& c, const worker::WorkerCall& call) {
    c.script = state_->scriptor(call);
    c.result.wall_s = 0;
    SeenCall seen;
    seen.call = call;
    c.keys = {seen.Op(), seen.Op() + "@" + seen.Env("CUDA_VISIBLE_DEVICES")};
    for (const auto& k : c.keys) state_->peak[k] = std::max(state_->peak[k], ++state_->playing[k]);
    c.last_progress = Clock::now();
  }

  // Runs c's steps until one waits or it ends. Under state_->mu.
  void Advance(Child& c) {
    while (!c.ended && !c.held) {
      const auto& steps = c.script.steps();
      if (c.pc == steps.size()) return Finish(c, util::ProcessEnd::kExited, 0, "");
      const Script::Step& s = steps[c.pc];
      if (s.kind == Script::Kind::kEnd) return Finish(c, s.end, s.code, s.text);
      if (!Step(c, s)) return Deadlocked(c);
      ++c.pc;
      c.last_progress = Clock::now();
    }
  }

  // One step that does not end the call; false while it waits.
  bool Step(Child& c, const Script::Step& s) {
    switch (s.kind) {
      case Script::Kind::kFrame: {
        json frame = s.frame;
        frame["token"] = state_->calls[c.seen].call.token;
        c.out += util::EncodeFrame(frame.dump());
        c.fresh = c.stream;
        return true;
      }
      case Script::Kind::kAwaitInput: {
        std::string payload;
        if (!c.inbox.Pop(&payload)) return false;
        state_->calls[c.seen].received.push_back(json::parse(payload, nullptr, false));
        return true;
      }
      case Script::Kind::kAwaitLatch:
        return state_->open.count(s.text) > 0;
      default:
        return false;
    }
  }

  // A call that has waited kDeadlockS without a step: the test would hang; it fails instead.
  void Deadlocked(Child& c) {
    double waited = std::chrono::duration<double>(Clock::now() - c.last_progress).count();
    if (waited < ScriptedLauncher::kDeadlockS) return;
    ADD_FAILURE() << "scripted call " << state_->calls[c.seen].Op() << " waited " << waited << " s at step " << c.pc;
    Finish(c, util::ProcessEnd::kSignaled, 0, "scripted worker: deadlock");
  }

  void Finish(Child& c, util::ProcessEnd end, int code, const std::string& stderr_tail) {
    const worker::WorkerCall& call = state_->calls[c.seen].call;
    c.ended = true;
    c.result.end = end;
    c.result.exit_code = end == util::ProcessEnd::kExited ? code : -1;
    c.result.signal = end == util::ProcessEnd::kExited || end == util::ProcessEnd::kSpawnFailed ? 0 : SIGKILL;
    if (end == util::ProcessEnd::kTimedOut) c.result.wall_s = call.wall_limit_s;
    if (end == util::ProcessEnd::kMemoryExceeded) c.result.peak_rss_bytes = call.max_rss_bytes + 1;
    if (end == util::ProcessEnd::kSpawnFailed) c.result.spawn_error = stderr_tail;
    c.result.stderr_tail = stderr_tail;
    c.result.channel_data = std::exchange(c.out, std::string());
    if (!c.held)
      for (const auto& k : c.keys) --state_->playing[k];
    state_->calls[c.seen].ended = true;
    --state_->alive;
    state_->cv.notify_all();
  }

  std::shared_ptr<State> state_;
  std::map<Id, Child> children_;  // started and not yet returned by WaitAny
  Id next_ = 1;
};
}  // namespace

ScriptedLauncher::ScriptedLauncher(Scriptor scriptor) : state_(std::make_shared<State>()) {
  state_->scriptor = std::move(scriptor);
}

ScriptedLauncher::~ScriptedLauncher() = default;

std::unique_ptr<worker::CallSet> ScriptedLauncher::NewSet(const worker::WorkerConfig&) const {
  return std::make_unique<ScriptedCallSet>(state_);
}

void ScriptedLauncher::Open(const std::string& latch) {
  std::lock_guard lock(state_->mu);
  state_->open.insert(latch);
  state_->cv.notify_all();
}

bool ScriptedLauncher::WaitPlaying(const std::string& op, size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->playing[op] >= n; });
}

size_t ScriptedLauncher::Peak(const std::string& key) const {
  std::lock_guard lock(state_->mu);
  auto it = state_->peak.find(key);
  return it == state_->peak.end() ? 0 : it->second;
}

std::vector<SeenCall> ScriptedLauncher::Calls() const {
  std::lock_guard lock(state_->mu);
  return state_->calls;
}

size_t ScriptedLauncher::Alive() const {
  std::lock_guard lock(state_->mu);
  return state_->alive;
}

worker::WorkerConfig ScriptedWorkerConfig() {
  worker::WorkerConfig config;
  config.python = "/nonexistent/kz-scripted-worker/python";
  config.package_dir = "/nonexistent/kz-scripted-worker";
  return config;
}

}  // namespace kz::testing_support
