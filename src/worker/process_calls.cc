// The real CallSet (call_set.h): worker calls as util::ProcessSet children.
#include <utility>

#include "worker/call_set.h"

namespace kz::worker {
namespace {

class ProcessCallSet final : public CallSet {
 public:
  explicit ProcessCallSet(WorkerConfig config) : config_(std::move(config)) {}

  Id Start(const WorkerCall& call, CallMode mode) override {
    util::ProcessSpec spec = MakeWorkerSpec(config_, call);
    if (mode.hold) {
      spec.channel_input.clear();  // its request comes with Release
      spec.hold = true;
    }
    spec.stream_channel = mode.stream;
    return set_.Start(std::move(spec));
  }
  std::vector<std::pair<Id, util::ProcessResult>> WaitAny(int timeout_ms) override { return set_.WaitAny(timeout_ms); }
  bool Release(Id id, const WorkerCall& call) override {
    return set_.Release(id, MakeWorkerSpec(config_, call).channel_input, call.wall_limit_s);
  }
  bool Send(Id id, std::string_view frame_bytes) override { return set_.Send(id, frame_bytes); }
  bool ExtendWallLimit(Id id, double seconds) override { return set_.ExtendWallLimit(id, seconds); }
  std::string TakeChannel(Id id) override { return set_.TakeChannel(id); }
  int GroupId(Id id) const override { return set_.GroupId(id); }
  size_t running() const override { return set_.running(); }
  void KillAll() override { set_.KillAll(); }

 private:
  const WorkerConfig config_;
  util::ProcessSet set_;
};

class ProcessCallLauncher final : public CallLauncher {
 public:
  std::unique_ptr<CallSet> NewSet(const WorkerConfig& config) const override {
    return std::make_unique<ProcessCallSet>(config);
  }
};

}  // namespace

LauncherPtr ProcessLauncher() {
  static const LauncherPtr launcher = std::make_shared<ProcessCallLauncher>();
  return launcher;
}

}  // namespace kz::worker
