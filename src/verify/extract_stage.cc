// Verifier::ExtractAll: the extraction step of Stage (python/kz_worker/farm/extract.py): the
// candidate's load_inline calls, from the extraction cache or a (sandboxed) child.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>

#include "compile/extract_cache.h"
#include "util/fs.h"
#include "verify/status.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kz::verify {
using nlohmann::json;

namespace {
// Folds a failed extraction into the verdict: a Python load error, a timeout or a crash.
void ApplyExtractFailure(json& verdict, const worker::WorkerReply& reply) {
  if (!reply.result) {
    bool timed_out = reply.process.end == util::ProcessEnd::kTimedOut;
    SetOutcome(verdict, timed_out ? Status::kTimeout : Status::kCompileError,
               "importing the candidate " + worker::DescribeEnd(reply.process), "import_crash");
    return;
  }
  const json& e = reply.result->value("error", json::object());
  SetOutcome(verdict, Status::kCompileError, e.value("message", "candidate failed to load"),
             e.value("kind", "import_error"));
  verdict["error"] = e;
}

// The calls with "candidate_file" (the name compiler diagnostics are mapped to,
// compile/source_map.h) set from the sample's own path: the extraction child saw a staged
// copy when sandboxed, and a cache hit carries the name of the first file with this text.
json NamedCalls(json calls, const Sample& sample) {
  std::string name = std::filesystem::path(sample.candidate_path).filename().string();
  if (calls.is_array())
    for (auto& call : calls)
      if (call.is_object()) call["candidate_file"] = name;
  return calls;
}
}  // namespace

void Verifier::ExtractAll(std::vector<Work>& work) const {
  bool any_cuda = std::any_of(work.begin(), work.end(), [](const Work& w) { return !w.done && w.backend == "cuda"; });
  if (!any_cuda) return;
  // With the environment known (without importing torch), a candidate seen before needs
  // no extraction child: its calls come from the extraction cache.
  auto start = std::chrono::steady_clock::now();
  std::optional<json> env = worker::ProbeEnvironment(worker_);
  compile::ExtractCache extract_cache(cache_.root());
  auto key = [&](const Work& w) { return compile::ExtractCache::Key(w.candidate_text, *env); };
  auto store = [&](const Work& w) {
    std::string err;  // a failed store only costs a later re-extraction
    if (env && w.build_env.value("torch", "") == env->value("torch", ""))
      extract_cache.Store(key(w), {{"calls", w.calls}, {"env", w.build_env}}, &err);
  };
  auto make = [&](Work& w) -> std::optional<worker::WorkerCall> {
    if (w.done || w.backend != "cuda") return std::nullopt;
    if (auto hit = env ? extract_cache.Lookup(key(w)) : std::nullopt) {
      w.calls = NamedCalls((*hit)["calls"], *w.sample);
      w.build_env = hit->value("env", json::object());
      w.verdict["stages"]["extract"] = {
          {"status", "ok"},
          {"cache", "hit"},
          {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
      return std::nullopt;
    }
    if (w.screen_read.is_object()) {  // read statically by the screen child: no extraction child
      w.calls = NamedCalls(w.screen_read["calls"], *w.sample);
      w.build_env = w.screen_read["env"];
      w.verdict["stages"]["extract"] = {{"status", "ok"}, {"cache", "miss"}, {"by", "screen"}, {"seconds", 0.0}};
      store(w);
      return std::nullopt;
    }
    worker::WorkerCall call;
    call.request = {{"op", "extract"}, {"candidate_path", util::AbsolutePath(w.sample->candidate_path)}};
    call.sandboxed = true;  // evaluates the candidate's module
    call.inputs = {util::AbsolutePath(w.sample->candidate_path)};
    call.env = {{"CUDA_VISIBLE_DEVICES", ""}};
    call.wall_limit_s = options_.extract_timeout_s;
    call.max_rss_bytes = options_.max_host_mem_mib << 20;
    return call;
  };
  RunPerSample(work, make, [&](Work& w, const worker::WorkerReply& reply) {
    if (!reply.result || !reply.result->value("ok", false)) {
      w.done = true;
      ApplyExtractFailure(w.verdict, reply);
      return;
    }
    w.calls = NamedCalls(reply.result->value("calls", json::array()), *w.sample);
    w.build_env = reply.result->value("env", json::object());
    w.verdict["stages"]["extract"] = {
        {"status", "ok"}, {"cache", "miss"}, {"by", "child"}, {"seconds", reply.process.wall_s}};
    store(w);
  });
}

}  // namespace kz::verify
