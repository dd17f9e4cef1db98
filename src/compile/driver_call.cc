#include "compile/driver_call.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "compile/build_driver.h"
#include "compile/build_facts.h"
#include "compile/cuda_split.h"
#include "compile/inline_layout.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
using Clock = std::chrono::steady_clock;
constexpr double kOpLimitS = 300;  // each Python op of a build (facts), within its deadline

double Left(Clock::time_point deadline) { return std::chrono::duration<double>(deadline - Clock::now()).count(); }

std::map<std::string, std::string> BuildEnv(const worker::WorkerCall& base) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (size_t eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : base.env) env[k] = v;
  return env;
}

// A worker op of this build: the base call with `request`, its deadline shortened.
std::optional<nlohmann::json> AskWorker(const worker::WorkerConfig& worker, const worker::WorkerCall& base,
                                        nlohmann::json request, Clock::time_point deadline, std::string* why) {
  worker::WorkerCall wc = base;
  wc.request = std::move(request);
  wc.token = worker::NewSessionToken();
  wc.wall_limit_s = std::max(0.001, std::min(kOpLimitS, Left(deadline)));
  auto reply = worker::RunWorker(worker, wc);
  if (reply.result) return reply.result;
  *why = "op " + wc.request.value("op", "") + ": the worker " + worker::DescribeEnd(reply.process) + ": " +
         reply.process.stderr_tail.substr(0, 500);
  return std::nullopt;
}

// The build's tools: its environment, its sandbox (one jail for them all), its marker.
ToolRunner Runner(const worker::WorkerConfig& worker, const worker::WorkerCall& base, Clock::time_point deadline) {
  ToolRunner r;
  r.env = base.env;
  r.deadline = deadline;
  r.timeout_s = base.wall_limit_s;
  r.nice = worker.nice, r.idle_class = worker.idle_class;
  if (worker.sandbox.active()) {
    auto jail = worker::NewJail(worker, base);
    const std::string& s = jail->scratch();
    r.env.insert(r.env.begin(), {{"TMPDIR", s + "/tmp"}, {"HOME", s + "/home"}, {"USER", "kz-sandbox"}});
    r.jail = jail;
  }
  return r;
}

worker::WorkerReply TimedOut(double seconds) {
  worker::WorkerReply reply;
  reply.process.end = util::ProcessEnd::kTimedOut;
  reply.process.signal = SIGKILL;
  reply.process.wall_s = seconds;
  return reply;
}

// A call the driver does not reproduce: torch's own load_inline builds it (op `build`).
worker::WorkerReply TorchBuild(const nlohmann::json& call, const std::string& staging, const worker::WorkerCall& base,
                               const worker::WorkerConfig& worker, Clock::time_point start, Clock::time_point deadline,
                               const std::string& why) {
  if (Left(deadline) <= 0) return TimedOut(-Left(start));
  worker::WorkerCall wc = base;
  wc.request = {{"op", "build"}, {"call", call}, {"build_dir", staging}};
  wc.wall_limit_s = std::max(0.001, Left(deadline));
  auto reply = worker::RunWorker(worker, wc);
  if (reply.result && reply.result->value("ok", false)) (*reply.result)["build"]["driver_skipped"] = why;
  return reply;
}
}  // namespace

worker::WorkerReply DriveCall(const nlohmann::json& call, const std::string& staging, const worker::WorkerCall& base,
                              const worker::WorkerConfig& worker, const std::string& pch_root, nlohmann::json probe) {
  auto start = Clock::now();
  auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(base.wall_limit_s * 1000));
  probe["python"] = worker.python;
  std::string why;
  auto key = FactsKeyText(call, BuildEnv(base), probe, &why);
  NinjaFacts facts;
  if (key) {
    std::string facts_dir = std::filesystem::path(pch_root).parent_path().string() + "/ninja";
    auto ask = [&](const nlohmann::json& req, std::string* w) { return AskWorker(worker, base, req, deadline, w); };
    facts = NinjaTemplateFor(call, *key, facts_dir, staging + "/.facts", ask);
    util::RemoveAll(staging + "/.facts");
  }
  if (facts.ninja.empty()) return TorchBuild(call, staging, base, worker, start, deadline, key ? facts.why : why);
  std::string ignored;
  auto sources = LoadInlineSources(call, &ignored);
  CudaSplit split;
  auto split_start = Clock::now();
  if (sources && sources->cu) split = SplitCudaSource(*sources->cu);  // in this process (cuda_split.h)
  double split_s = std::chrono::duration<double>(Clock::now() - split_start).count();
  DriverSetup setup{pch_root, probe.value("torch", ""), Runner(worker, base, deadline), nullptr};
  if (sources && sources->cu) setup.split = [&](const std::string&) { return split; };
  DriverOutcome out = DriveBuild(call, staging, facts.ninja, setup);
  if (out.timed_out) return TimedOut(-Left(start));
  worker::WorkerReply reply;
  reply.process.end = util::ProcessEnd::kExited;
  if (!out.machine_error.empty()) {  // never cached: Finish reports it as a crash
    reply.process.exit_code = 1;
    reply.process.stderr_tail = out.machine_error;
    return reply;
  }
  if (out.result.value("ok", false)) {
    out.result["build"]["facts_cached"] = facts.cached;
    if (sources && sources->cu) out.result["build"]["split_seconds"] = std::round(split_s * 1000) / 1000;
  }
  reply.process.exit_code = 0;
  reply.result = out.result;
  return reply;
}

}  // namespace kz::compile
