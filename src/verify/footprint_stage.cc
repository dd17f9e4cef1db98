// Verifier::FootprintAll: the footprint step of Stage (verify/footprint.h).
#include <set>

#include "util/fs.h"
#include "verify/status.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kz::verify {
using nlohmann::json;

namespace {
std::string TaskXxh(const Verifier::Work& w) {
  const json& t = w.verdict.value("task", json::object());
  return t.value("xxh128", "");
}
}  // namespace

void Verifier::FootprintAll(std::vector<Work>& work) const {
  std::set<std::string> asked;  // one child per distinct task of this batch
  auto make = [&](const Work& w) -> std::optional<worker::WorkerCall> {
    std::string key = TaskXxh(w);
    if (w.done || key.empty() || footprints_->Find(key) || !asked.insert(key).second) return std::nullopt;
    worker::WorkerCall call;
    call.request = {{"op", "footprint"}, {"task_path", util::AbsolutePath(w.sample->task_path)}};
    call.sandboxed = true;  // the task's code is a client's too
    call.inputs = {util::AbsolutePath(w.sample->task_path)};
    call.env = {{"CUDA_VISIBLE_DEVICES", ""}};  // meta device only: never a GPU context
    call.wall_limit_s = 120;
    call.max_rss_bytes = options_.max_host_mem_mib << 20;
    return call;
  };
  RunPerSample(work, make, [&](Work& w, const worker::WorkerReply& reply) {
    const json* r = reply.result ? &*reply.result : nullptr;
    footprints_->Put(TaskXxh(w), FootprintSummary(r, worker::DescribeEnd(reply.process)));
  });
  uint64_t limit = gpu_ ? gpu_->memory_bytes : options_.max_host_mem_mib << 20;
  std::string where = gpu_ ? "the GPU (" + gpu_->name + ")" : "the run child's host-memory limit";
  for (auto& w : work) {
    if (w.done) continue;
    auto summary = footprints_->Find(TaskXxh(w));
    if (!summary) continue;
    w.verdict["footprint"] = *summary;
    if (auto why = FootprintRefusal(*summary, limit, where)) {
      SetOutcome(w.verdict, Status::kInvalidTask, *why, "too_large");
      w.done = true;
    }
  }
}

}  // namespace kz::verify
