// One accelerated build through the C++ driver (build_driver.h), on the calling thread: the
// facts from torch (build_facts.h, cached), the cuda.cu split (cuda_split.h), the
// build itself, each process in the build's sandbox and under its deadline. A call the
// driver does not reproduce is built by torch's own load_inline (Python op `build`).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "worker/worker_client.h"

namespace kz::compile {

// `base`: the build's worker call (environment with its KZ_BUILD_ID marker, sandbox paths,
// limits; its request is replaced). `probe`: worker::ProbeEnvironment's answer (taken on the
// caller's thread: the probe's memo is not thread-safe). The reply is shaped as op `build`'s worker reply: a
// result frame, or a process that timed out with no result.
worker::WorkerReply DriveCall(const nlohmann::json& call, const std::string& staging, const worker::WorkerCall& base,
                              const worker::WorkerConfig& worker, const std::string& pch_root, nlohmann::json probe);

}  // namespace kz::compile
