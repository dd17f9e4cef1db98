// A scripted stand-in for the worker's child processes (worker/call_set.h) in logic tests:
// each call plays a Script — the frames it sends, the frames and latches it waits for, how it
// ends — with no process and no sleep. A waiting WaitAny sleeps on a condition variable that
// every event wakes (a frame sent to a call, a latch opened, a call started or ended); its
// timeout is only the poll interval of the code under test. Calls that wait for something
// nothing will do (a deadlock of the test) are ended after kDeadlockS with a test failure.
// The real child process keeps its own integration tests (tests/unit/worker,
// tests/unit/util/subprocess_test.cc and one real-process test per layer).
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/subprocess.h"
#include "worker/call_set.h"

namespace kz::testing_support {

// What one scripted call does, step by step. After the last step it exits with code 0.
class Script {
 public:
  Script& Frame(nlohmann::json frame);    // sends it on the channel (the call's token added)
  Script& Result(nlohmann::json fields);  // Frame of "type": "result" with `fields`
  Script& AwaitInput();                   // waits for one frame from the supervisor (CallSet::Send)
  Script& AwaitLatch(std::string name);   // waits until the test opens `name`
  Script& Hang();                         // waits until killed (KillAll, or its set is dropped)
  Script& Exit(int code, std::string stderr_tail = "");
  // Ends as the process layer reports a child it ended: kTimedOut, kMemoryExceeded, kSignaled
  // (SIGKILL), kSpawnFailed.
  Script& End(util::ProcessEnd end, std::string stderr_tail = "");

  enum class Kind { kFrame, kAwaitInput, kAwaitLatch, kHang, kEnd };
  struct Step {
    Kind kind = Kind::kHang;
    nlohmann::json frame;  // kFrame
    std::string text;      // kAwaitLatch: the latch; kEnd: stderr
    util::ProcessEnd end = util::ProcessEnd::kExited;
    int code = 0;
  };
  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::vector<Step> steps_;
};

// A call the fake has seen: as started, or for a held call as released (with the
// environment of its start, which is the child's).
struct SeenCall {
  worker::WorkerCall call;
  worker::CallMode mode;
  std::vector<nlohmann::json> received;  // frames the supervisor sent it
  bool killed = false;
  bool ended = false;
  std::string Env(const std::string& name) const;  // its environment variable, "<unset>" if none
  std::string Op() const { return call.request.is_object() ? call.request.value("op", "") : ""; }  // "": held
};

class ScriptedLauncher final : public worker::CallLauncher {
 public:
  static constexpr double kDeadlockS = 60;
  // Chooses a call's script when it starts playing (a held call: at Release). Called with the
  // fake's lock held: it may write files, never call back into the launcher.
  using Scriptor = std::function<Script(const worker::WorkerCall&)>;
  explicit ScriptedLauncher(Scriptor scriptor);
  ~ScriptedLauncher() override;
  std::unique_ptr<worker::CallSet> NewSet(const worker::WorkerConfig& config) const override;

  // Any thread.
  void Open(const std::string& latch);
  // Until `n` calls of `op` are playing at once (started, released if held, not ended);
  // false if `timeout` passes first.
  bool WaitPlaying(const std::string& op, size_t n, std::chrono::milliseconds timeout) const;
  // The most calls playing at once, by "op" or "op@<CUDA_VISIBLE_DEVICES>".
  size_t Peak(const std::string& key) const;
  std::vector<SeenCall> Calls() const;  // every call started, in order
  size_t Alive() const;                 // started (held or playing) and not ended

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// A worker configuration for scripted tests: its interpreter does not exist, so the verifier's
// memoised environment probe fails at once.
worker::WorkerConfig ScriptedWorkerConfig();

}  // namespace kz::testing_support
