// One call of the Python worker (`python -m kz_worker`): a fresh child process per call,
// the request as the one frame it reads on fd 3, events and a result frame back.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/sandbox.h"
#include "util/subprocess.h"

namespace kz::worker {

inline constexpr int kProtocolVersion = 1;

struct WorkerConfig {
  std::string python;       // interpreter that has torch
  std::string package_dir;  // directory holding the kz_worker package
  std::string runtime_lib;  // libkz_runtime.so, or "" when absent
  int nice = 0;             // added to every worker child's nice value (kz serve: its HTTP threads first)
  bool idle_class = false;  // children under SCHED_IDLE (kz serve --child-priority idle)
  std::string bytecode_dir;     // PYTHONPYCACHEPREFIX once bytecode_marker exists (bytecode.h)
  std::string bytecode_marker;
  // The sandbox of calls marked `sandboxed` (docs/sandbox.md): the mode, the mechanisms the
  // start-up check found (sandbox::Check), limits, and where jails stage their inputs.
  struct Sandbox {
    sandbox::Mode mode = sandbox::Mode::kOff;
    sandbox::Features features{false, false, false, false};
    sandbox::Limits limits;
    std::string stage_base;  // "" = the system temp directory
    std::string triton_cache;  // shared read-only under each child's private overlay ("" = none)
    bool active() const { return mode != sandbox::Mode::kOff && (features.namespaces || features.seccomp); }
    nlohmann::json Describe() const { return sandbox::Describe(mode, features, limits); }
  } sandbox;
};

// Finds the interpreter ($KZ_PYTHON, else <repo>/.venv/bin/python, else python3), the
// package (beside the executable's tree, else the source tree) and the runtime library
// ($KZ_RUNTIME_LIB, else <exe>/../lib/libkz_runtime.so). `exe` is argv[0] resolved.
WorkerConfig LocateWorker(const std::string& exe);

// 128 random bits as hex: a per-call session token. The worker echoes it in every frame;
// frames without it are dropped, so candidate code cannot forge a result by writing to
// the channel unless it first finds the token (which the screen's rules make hard).
std::string NewSessionToken();

struct WorkerCall {
  nlohmann::json request;                                   // "protocol" and "token" are added
  std::string token = NewSessionToken();
  std::vector<std::pair<std::string, std::string>> env;     // extra environment
  double wall_limit_s = 60;
  uint64_t max_rss_bytes = 0;
  // Candidate (or task) code runs in this child: it starts in the config's sandbox, if any.
  bool sandboxed = false;
  std::vector<std::string> inputs;     // host files named in the request: staged read-only, paths rewritten
  std::vector<std::string> read_only;  // host paths it reads in place
  std::vector<std::string> writable;   // host directories it writes (a build's staging dir)
  std::vector<std::string> shared_writable;  // ... shared with other children (the PCH directory)
  std::vector<std::string> devices;    // /dev nodes it needs (its GPU's)
  std::shared_ptr<sandbox::Jail> jail; // an existing jail (a prestarted child's); null = a new one
  std::vector<std::string> argv_prefix;  // a command the worker runs under (ncu), "" = none
};

struct WorkerReply {
  util::ProcessResult process;
  std::vector<nlohmann::json> events;
  std::optional<nlohmann::json> result;
  std::string protocol_error;  // undecodable frames or JSON; "" if none
};

// The child's spec. A `sandboxed` call under an active sandbox gets a jail (call.jail or a
// new one), its inputs staged into it and the request's paths rewritten, and a private
// TMPDIR, HOME, TORCH_EXTENSIONS_DIR and TRITON_CACHE_DIR (call.env may override them).
util::ProcessSpec MakeWorkerSpec(const WorkerConfig& config, const WorkerCall& call);

// A jail for `call` under `config`'s sandbox: the Python environment, the worker package and
// runtime library read-only, plus the call's paths and devices (sandboxed.cc).
std::shared_ptr<sandbox::Jail> NewJail(const WorkerConfig& config, const WorkerCall& call);
// Stages call.inputs into `jail` and rewrites every string of `request` equal to one of them.
void StageInputs(sandbox::Jail& jail, const std::vector<std::string>& inputs, nlohmann::json* request);
// GPU device nodes for a child pinned to GPU `index` (those present on this host).
std::vector<std::string> GpuDevices(int index);
// How deep a worker's frame may nest arrays and objects (the protocol needs fewer than 10;
// dump() and copies of JSON recurse, so deeper frames from a child running candidate code
// would overflow a verifier thread's stack).
inline constexpr int kMaxFrameDepth = 64;
// A frame's payload parsed, or discarded (is_discarded()) when it is not JSON or nests arrays
// and objects more than kMaxFrameDepth deep (checked before anything is built).
nlohmann::json ParseFrameJson(const std::string& payload);
// Frames whose "token" is not `token` are dropped and reported in protocol_error; so is a
// frame that is not a JSON object of at most kMaxFrameDepth levels (ParseFrameJson).
WorkerReply ParseWorkerReply(util::ProcessResult process, const std::string& token);
WorkerReply RunWorker(const WorkerConfig& config, const WorkerCall& call);

// The versions that key compiled extensions ({"torch", "cuda", "python"}), read by
// `python -m kz_worker.probe` without importing torch (~0.1 s), once per interpreter and
// package in a process: later calls reuse it while torch's version.py is unchanged (one
// stat). nullopt if it fails.
std::optional<nlohmann::json> ProbeEnvironment(const WorkerConfig& config);

// The path of torch/version.py that the (memoised) probe read, or "" when unknown.
std::string TorchVersionFile(const WorkerConfig& config);

// One line describing how the child ended, for reasons and logs.
std::string DescribeEnd(const util::ProcessResult& p);

}  // namespace kz::worker
