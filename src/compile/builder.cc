#include "compile/builder.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "compile/build_procs.h"
#include "compile/diagnostics.h"
#include "compile/driver_call.h"
#include "compile/flag_policy.h"
#include "compile/source_map.h"
#include "util/fs.h"
#include "util/key_lock.h"

namespace kz::compile {
namespace {

constexpr int kScanEveryMs = 250;     // how often the memory of running builds is measured
constexpr int kDeferredPollMs = 100;  // how often a key another builder holds is looked up
constexpr int kDriverPollMs = 10;     // how often builds of the C++ driver are looked at while workers run

struct Pending {
  size_t first_index;  // the call this build is for; others with the key share it
  std::string staging;
  std::chrono::steady_clock::time_point start;
  std::string token;            // the build call's session token
  std::string marker;           // KZ_BUILD_ID of every process of this build
  bool memory_killed = false;   // its processes together passed the memory limit
  uint64_t peak_rss_bytes = 0;  // of all its processes together
};

std::string MiB(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

worker::WorkerCall BuildCall(const nlohmann::json& call, const std::string& staging, const std::string& marker,
                             const worker::WorkerConfig& worker, const BuilderOptions& o) {
  worker::WorkerCall wc;
  wc.request = {{"op", "build"}, {"call", call}, {"build_dir", staging}};  // torch's load_inline
  std::string path = std::filesystem::path(worker.python).parent_path().string();
  const char* old_path = std::getenv("PATH");
  if (!path.empty()) path += ":";
  path += old_path ? old_path : "/usr/bin:/bin";
  wc.env = {{"CUDA_VISIBLE_DEVICES", ""},
            {"TORCH_CUDA_ARCH_LIST", o.env.arch_list},
            {"TORCH_EXTENSIONS_DIR", staging},
            {"MAX_JOBS", "2"},
            {"PATH", path},
            {kBuildMarkerVar, marker}};
  if (!std::getenv("CUDA_HOME")) wc.env.emplace_back("CUDA_HOME", "/usr/local/cuda");
  wc.wall_limit_s = o.timeout_s;
  wc.max_rss_bytes = o.max_rss_bytes;
  wc.sandboxed = true;  // compiles the candidate's sources: sees the toolchain, writes only its staging dir
  wc.writable = {staging};
  for (const char* var : {"CXX", "CC", "CUDA_HOME", "CUDA_PATH", "PYTORCH_NVCC"})  // a toolchain set by the operator
    if (const char* v = std::getenv(var); v && v[0] == '/')
      wc.read_only.push_back(std::string(v).substr(0, std::string(v).find(' ')));
  if (o.accelerate && !o.pch_root.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.pch_root, ec);
    wc.shared_writable.push_back(o.pch_root);  // precompiled torch headers and build templates (docs/sandbox.md)
  }
  return wc;
}

// Turns a finished build child into a result, publishing the library on success. Its
// diagnostics are the compiler's (trimmed), not yet mapped to any candidate: that is done
// per call, since calls of one key may come from different files.
BuildResult Finish(const worker::WorkerReply& reply, const Pending& pending, const std::string& key,
                   const nlohmann::json& call, const ExtensionCache& cache, const BuilderOptions& o) {
  BuildResult r;
  r.name = call.value("name", "");
  r.key = key;
  const std::string& staging = pending.staging;
  const auto& p = reply.process;
  if (pending.memory_killed || (!reply.result && p.end == util::ProcessEnd::kMemoryExceeded)) {
    r.error_kind = "memory_limit";
    uint64_t used = std::max(pending.peak_rss_bytes, p.peak_rss_bytes);
    r.diagnostics = "the build exceeded its host-memory limit of " + MiB(o.max_rss_bytes) + " (" + MiB(used) +
                    " resident in the build worker and its compiler processes together); "
                    "all of them were killed. The limit is kz verify's --max-host-mem.\n" +
                    TrimDiagnostics(p.stderr_tail);
    util::RemoveAll(staging);
    return r;
  }
  if (!reply.result) {
    r.error_kind = p.end == util::ProcessEnd::kTimedOut ? "timeout" : "crash";
    r.diagnostics = "the build process " + worker::DescribeEnd(p) +
                    (p.end == util::ProcessEnd::kTimedOut ? " (with its compiler processes)" : "") + "\n" +
                    TrimDiagnostics(p.stderr_tail);
    util::RemoveAll(staging);
    return r;
  }
  const auto& res = *reply.result;
  if (!res.value("ok", false)) {
    std::string msg = res.contains("error") ? res["error"].value("message", "") : "";
    if (auto env = ClassifyBuildFailure(msg)) {  // not the sources' fault: not cached
      r.error_kind = env->kind;
      r.diagnostics = env->reason + "\n" + TrimDiagnostics(msg);
      util::RemoveAll(staging);
      return r;
    }
    r.error_kind = "compile_error";
    r.diagnostics = TrimDiagnostics(msg);
    // Cache the failure too: the same sources fail the same way. The entry is its
    // meta.json alone, not the build's leftovers.
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(staging, ec)) std::filesystem::remove_all(e.path(), ec);
    std::string ignored, err;
    nlohmann::json meta = {{"ok", false}, {"name", r.name}, {"diagnostics", r.diagnostics}};
    if (!cache.Publish(staging, key, r.name, meta, &ignored, &err)) util::RemoveAll(staging);
    return r;
  }
  std::string built = res.value("library", "");
  std::string want = staging + "/" + r.name + ".so";
  std::error_code ec;
  if (built != want) std::filesystem::rename(built, want, ec);
  r.build = res.value("build", nlohmann::json::object());
  nlohmann::json meta = {{"name", r.name},
                         {"digest", call.value("digest", "")},
                         {"seconds", res.value("seconds", 0.0)},
                         {"build", r.build}};
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

namespace {
// One batch of builds: cache lookups first, then at most `jobs` build processes at a time
// in one CallSet; calls with the same key wait on one build, and a key another thread
// or process is building (its lock file under <cache>/locks is held) waits for that
// build's entry instead of building it again.
class BuildBatch {
 public:
  BuildBatch(const std::vector<nlohmann::json>& calls, const ExtensionCache& cache, const worker::WorkerConfig& worker,
             const BuilderOptions& options, const BuildProgress& progress, const worker::LauncherPtr& launcher)
      : calls_(calls),
        cache_(cache),
        worker_(worker),
        options_(options),
        progress_(progress),
        results_(calls.size()),
        set_(launcher->NewSet(worker)) {}

  std::vector<BuildResult> Run() {
    LookupAll();
    while (next_ < to_build_.size() || !running_.empty() || !driving_.empty() || !deferred_.empty()) {
      StartMore();
      if (running_.empty() && driving_.empty() && !deferred_.empty())
        std::this_thread::sleep_for(std::chrono::milliseconds(kDeferredPollMs));
      auto finished = WaitForWork();
      EnforceMemoryLimit();
      FinishDriven();
      for (auto& [id, proc] : finished) {
        Pending p = running_[id];
        running_.erase(id);
        // Compilers that outlived their worker (ninja puts each in a group of its own, which
        // a timeout's group kill misses) are killed here.
        KillBuildProcesses(p.marker);
        auto reply = worker::ParseWorkerReply(std::move(proc), p.token);
        size_t i = p.first_index;
        Complete(Finish(reply, p, keys_[i], calls_[i], cache_, options_), Since(p.start));
        key_locks_.erase(keys_[i]);  // published (or failed): the next waiter looks it up
      }
      RetryDeferred();
    }
    return std::move(results_);
  }

 private:
  static double Since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // Measures each running build's processes together (worker, ninja, every compiler) and
  // kills a build over the memory limit; its worker then ends and Finish reports it.
  void EnforceMemoryLimit() {
    if (!options_.max_rss_bytes || running_.empty()) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_scan_ < std::chrono::milliseconds(kScanEveryMs)) return;
    last_scan_ = now;
    auto procs = FindBuildProcesses();
    auto check = [&](Pending& p) {
      auto it = procs.find(p.marker);
      if (it == procs.end()) return;
      p.peak_rss_bytes = std::max(p.peak_rss_bytes, it->second.rss_bytes);
      if (!p.memory_killed && it->second.rss_bytes > options_.max_rss_bytes) {
        p.memory_killed = true;
        KillBuildProcesses(p.marker);
      }
    };
    for (auto& [id, p] : running_) check(p);
    for (auto& [id, d] : driving_) check(d.pending);
  }

  // Waits for a worker to end (a CallSet of them), a driver build to finish, or a scan.
  std::vector<std::pair<worker::CallSet::Id, util::ProcessResult>> WaitForWork() {
    if (!running_.empty() || driving_.empty()) return set_->WaitAny(driving_.empty() ? kScanEveryMs : kDriverPollMs);
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(kScanEveryMs), [&] { return drives_done_ != drives_seen_; });
    drives_seen_ = drives_done_;
    return {};
  }

  // Starts call i's build on a thread of its own through the C++ driver (driver_call.h).
  void StartDriven(size_t i, const Pending& p, const worker::WorkerCall& call) {
    if (!probe_) probe_ = worker::ProbeEnvironment(worker_).value_or(nlohmann::json::object());
    auto run = [this, c = calls_[i], staging = p.staging, call, probe = *probe_]() {
      worker::WorkerReply reply;
      try {
        reply = DriveCall(c, staging, call, worker_, options_.pch_root, probe);
      } catch (const std::exception& e) {  // a bug, not the sources': reported as a crash, never cached
        reply.process.end = util::ProcessEnd::kExited;
        reply.process.exit_code = 1;
        reply.process.stderr_tail = std::string("build driver: ") + e.what();
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++drives_done_;
      cv_.notify_one();
      return reply;
    };
    driving_.emplace(next_drive_++, Driven{p, std::async(std::launch::async, run)});
  }

  // Completes the driver builds that have finished.
  void FinishDriven() {
    for (auto it = driving_.begin(); it != driving_.end();) {
      if (it->second.reply.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      Pending p = it->second.pending;
      worker::WorkerReply reply = it->second.reply.get();
      it = driving_.erase(it);
      KillBuildProcesses(p.marker);
      size_t i = p.first_index;
      Complete(Finish(reply, p, keys_[i], calls_[i], cache_, options_), Since(p.start));
      key_locks_.erase(keys_[i]);
    }
  }

  // The diagnostics of a failed result, mapped to call `j`'s own sources and file.
  void MapFor(size_t j, BuildResult& r) const {
    if (!r.ok && !r.diagnostics.empty()) r.diagnostics = MapDiagnostics(r.diagnostics, LayoutOf(calls_[j]));
  }

  void LookupAll() {
    for (size_t i = 0; i < calls_.size(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      keys_.push_back(ExtensionCache::Key(calls_[i], options_.env));
      BuildResult& r = results_[i];
      r.name = calls_[i].value("name", "");
      r.digest = calls_[i].value("digest", "");
      r.key = keys_[i];
      if (std::string refused = RefusedBuildFlag(calls_[i]); !refused.empty()) {
        r.error_kind = "compile_error", r.diagnostics = refused, r.seconds = Since(t0);
        Report(r);  // refused before any lookup or build: nothing cached
        continue;
      }
      if (auto hit = Hit(i)) {
        results_[i] = *hit;
        results_[i].seconds = Since(t0);
        MapFor(i, results_[i]);
        Report(results_[i]);
        continue;
      }
      bool first = waiting_[keys_[i]].empty();
      waiting_[keys_[i]].push_back(i);
      if (first) Claim(i, t0);
    }
  }

  // One build of a key at a time, across threads and processes: takes key i's lock and
  // queues its build (also when no lock can be made: a read-only cache builds unlocked);
  // defers it while another builder holds the lock; completes it if its entry appeared.
  void Claim(size_t i, std::chrono::steady_clock::time_point t0) {
    bool busy = false;
    auto lock = util::KeyLock::TryAcquire(LockPath(i), &busy);
    if (busy) {
      deferred_.push_back({i, t0});
      return;
    }
    if (lock && FromCache(i, t0)) return;  // published before we took the lock
    if (lock) key_locks_.emplace(keys_[i], std::move(*lock));
    to_build_.push_back(i);
  }

  // Call i's result from a cache entry, if there is one.
  std::optional<BuildResult> Hit(size_t i) const {
    auto entry = cache_.Lookup(keys_[i], results_[i].name);
    if (!entry) return std::nullopt;
    cache_.Touch(keys_[i]);
    BuildResult r = results_[i];
    r.cache_hit = true;
    r.ok = entry->ok;
    r.library = entry->library;
    if (!entry->ok) r.error_kind = "compile_error", r.diagnostics = entry->diagnostics;
    return r;
  }

  // Completes every call waiting on call i's key from a cache entry, if there is one.
  bool FromCache(size_t i, std::chrono::steady_clock::time_point t0) {
    auto hit = Hit(i);
    if (hit) Complete(*hit, Since(t0));
    return hit.has_value();
  }

  // Deferred keys (another builder held their lock): a published entry completes them; a
  // lock now free (that build failed or died without an entry) lets this batch build.
  void RetryDeferred() {
    auto deferred = std::move(deferred_);
    deferred_.clear();
    for (auto [i, t0] : deferred)
      if (!FromCache(i, t0)) Claim(i, t0);
  }

  std::string LockPath(size_t i) const { return cache_.root() + "/locks/" + keys_[i] + ".lock"; }

  void StartMore() {
    while (next_ < to_build_.size() &&
           static_cast<int>(running_.size() + driving_.size()) < std::max(1, options_.jobs)) {
      size_t i = to_build_[next_++];
      std::string err;
      std::string staging = cache_.NewStagingDir(&err);
      if (staging.empty()) {
        BuildResult failed = results_[i];
        failed.error_kind = "cache";
        failed.diagnostics = "cannot build: the cache directory " + cache_.root() + " is not writable (" + err + ")";
        Complete(failed, 0);
        key_locks_.erase(keys_[i]);
        continue;
      }
      std::string marker = worker::NewSessionToken();
      auto call = BuildCall(calls_[i], staging, marker, worker_, options_);
      Pending p{i, staging, std::chrono::steady_clock::now(), call.token, marker};
      if (options_.accelerate && !options_.pch_root.empty())
        StartDriven(i, p, call);
      else
        running_[set_->Start(call)] = p;
    }
  }

  // Gives `built` to every call waiting on its key.
  void Complete(const BuildResult& built, double seconds) {
    for (size_t j : waiting_[built.key]) {
      std::string digest = results_[j].digest;
      results_[j] = built;
      results_[j].digest = digest;
      results_[j].seconds = seconds;
      MapFor(j, results_[j]);
      Report(results_[j]);
    }
  }

  void Report(const BuildResult& r) {
    ++done_;
    if (progress_) progress_(r, done_, calls_.size());
  }

  const std::vector<nlohmann::json>& calls_;
  const ExtensionCache& cache_;
  const worker::WorkerConfig& worker_;
  const BuilderOptions& options_;
  const BuildProgress& progress_;
  std::vector<BuildResult> results_;
  std::vector<std::string> keys_;
  std::map<std::string, std::vector<size_t>> waiting_;  // key -> calls waiting on its build
  std::vector<size_t> to_build_;                        // first call of each key to build
  size_t next_ = 0, done_ = 0;
  // Keys another builder holds (first call, when it was asked for).
  std::vector<std::pair<size_t, std::chrono::steady_clock::time_point>> deferred_;
  std::map<std::string, util::KeyLock> key_locks_;  // key -> its held build lock
  std::unique_ptr<worker::CallSet> set_;
  std::map<worker::CallSet::Id, Pending> running_;  // builds of a worker (op build)
  struct Driven {
    Pending pending;
    std::future<worker::WorkerReply> reply;
  };
  std::map<int, Driven> driving_;  // builds of the C++ driver, by start order
  int next_drive_ = 0;
  std::optional<nlohmann::json> probe_;  // worker::ProbeEnvironment, once per batch
  std::mutex mu_;
  std::condition_variable cv_;
  int drives_done_ = 0;  // guarded by mu_: driver builds finished (wakes WaitForWork)
  int drives_seen_ = 0;
  std::chrono::steady_clock::time_point last_scan_{};
};
}  // namespace

std::vector<BuildResult> BuildExtensions(const std::vector<nlohmann::json>& calls, const ExtensionCache& cache,
                                         const worker::WorkerConfig& worker, const BuilderOptions& options,
                                         const BuildProgress& progress, const worker::LauncherPtr& launcher) {
  return BuildBatch(calls, cache, worker, options, progress, launcher).Run();
}

}  // namespace kz::compile
