// One call of the Python worker (`python -m kz_worker`): a fresh child process per call,
// the request as the one frame it reads on fd 3, events and a result frame back.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

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
};

struct WorkerReply {
  util::ProcessResult process;
  std::vector<nlohmann::json> events;
  std::optional<nlohmann::json> result;
  std::string protocol_error;  // undecodable frames or JSON; "" if none
};

util::ProcessSpec MakeWorkerSpec(const WorkerConfig& config, const WorkerCall& call);
// Frames whose "token" is not `token` are dropped and reported in protocol_error.
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
