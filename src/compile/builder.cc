#include "compile/builder.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "compile/diagnostics.h"
#include "util/fs.h"

namespace kz::compile {
namespace {

struct Pending {
  size_t first_index;          // the call this build is for; others with the key share it
  std::string staging;
  std::chrono::steady_clock::time_point start;
};

worker::WorkerCall BuildCall(const nlohmann::json& call, const std::string& staging,
                             const worker::WorkerConfig& worker, const BuilderOptions& o) {
  worker::WorkerCall wc;
  wc.request = {{"op", "build"}, {"call", call}, {"build_dir", staging}};
  std::string path = std::filesystem::path(worker.python).parent_path().string();
  const char* old_path = std::getenv("PATH");
  if (!path.empty()) path += ":";
  path += old_path ? old_path : "/usr/bin:/bin";
  wc.env = {{"CUDA_VISIBLE_DEVICES", ""}, {"TORCH_CUDA_ARCH_LIST", o.env.arch_list},
            {"TORCH_EXTENSIONS_DIR", staging}, {"MAX_JOBS", "2"}, {"PATH", path}};
  if (!std::getenv("CUDA_HOME")) wc.env.emplace_back("CUDA_HOME", "/usr/local/cuda");
  wc.wall_limit_s = o.timeout_s;
  wc.max_rss_bytes = o.max_rss_bytes;
  return wc;
}

// Turns a finished build child into a result, publishing the library on success.
BuildResult Finish(const worker::WorkerReply& reply, const std::string& staging,
                   const std::string& key, const nlohmann::json& call, const ExtensionCache& cache) {
  BuildResult r;
  r.name = call.value("name", "");
  r.key = key;
  const auto& p = reply.process;
  if (!reply.result) {
    r.error_kind = p.end == util::ProcessEnd::kTimedOut         ? "timeout"
                   : p.end == util::ProcessEnd::kMemoryExceeded ? "memory_limit"
                                                                : "crash";
    r.diagnostics = "the build process " + worker::DescribeEnd(p) + "\n" + TrimDiagnostics(p.stderr_tail);
    util::RemoveAll(staging);
    return r;
  }
  const auto& res = *reply.result;
  if (!res.value("ok", false)) {
    r.error_kind = "compile_error";
    std::string msg = res.contains("error") ? res["error"].value("message", "") : "";
    r.diagnostics = TrimDiagnostics(msg);
    util::RemoveAll(staging);
    return r;
  }
  std::string built = res.value("library", "");
  std::string want = staging + "/" + r.name + ".so";
  std::error_code ec;
  if (built != want) std::filesystem::rename(built, want, ec);
  nlohmann::json meta = {{"name", r.name}, {"digest", call.value("digest", "")},
                         {"seconds", res.value("seconds", 0.0)}};
  std::string err;
  if (ec || !cache.Publish(staging, key, r.name, meta, &r.library, &err)) {
    r.error_kind = "cache";
    r.diagnostics = ec ? ec.message() : err;
    util::RemoveAll(staging);
    return r;
  }
  r.ok = true;
  return r;
}
}  // namespace

std::vector<BuildResult> BuildExtensions(const std::vector<nlohmann::json>& calls,
                                         const ExtensionCache& cache,
                                         const worker::WorkerConfig& worker,
                                         const BuilderOptions& options,
                                         const BuildProgress& progress) {
  std::vector<BuildResult> results(calls.size());
  std::vector<std::string> keys;
  std::map<std::string, std::vector<size_t>> waiting;  // key -> calls waiting on its build
  std::vector<size_t> to_build;
  for (size_t i = 0; i < calls.size(); ++i) {
    keys.push_back(ExtensionCache::Key(calls[i], options.env));
    auto& r = results[i];
    r.name = calls[i].value("name", "");
    r.digest = calls[i].value("digest", "");
    r.key = keys[i];
    auto t0 = std::chrono::steady_clock::now();
    if (auto lib = cache.Lookup(keys[i], r.name)) {
      r.ok = r.cache_hit = true;
      r.library = *lib;
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      continue;
    }
    if (waiting[keys[i]].empty()) to_build.push_back(i);
    waiting[keys[i]].push_back(i);
  }
  size_t done = calls.size() - [&] { size_t n = 0; for (auto& [k, v] : waiting) n += v.size(); return n; }();
  util::ProcessSet set;
  std::map<util::ProcessSet::Id, Pending> running;
  size_t next = 0;
  auto complete = [&](const BuildResult& built, double seconds) {
    for (size_t j : waiting[built.key]) {
      std::string digest = results[j].digest;
      results[j] = built;
      results[j].digest = digest;
      results[j].seconds = seconds;
      ++done;
      if (progress) progress(results[j], done, calls.size());
    }
  };
  while (next < to_build.size() || !running.empty()) {
    while (next < to_build.size() && static_cast<int>(running.size()) < std::max(1, options.jobs)) {
      size_t i = to_build[next++];
      std::string err;
      std::string staging = cache.NewStagingDir(&err);
      if (staging.empty()) {
        BuildResult failed{results[i].name, results[i].digest, keys[i], false, false, 0, "", "cache", err};
        complete(failed, 0);
        continue;
      }
      auto id = set.Start(worker::MakeWorkerSpec(worker, BuildCall(calls[i], staging, worker, options)));
      running[id] = {i, staging, std::chrono::steady_clock::now()};
    }
    for (auto& [id, proc] : set.WaitAny()) {
      Pending p = running[id];
      running.erase(id);
      auto reply = worker::ParseWorkerReply(std::move(proc));
      BuildResult r = Finish(reply, p.staging, keys[p.first_index], calls[p.first_index], cache);
      complete(r, std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count());
    }
  }
  return results;
}

}  // namespace kz::compile
