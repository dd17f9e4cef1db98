// `kz optimize --server URL`: each verification goes to a running `kz serve` (docs/api.md)
// through scoring::RemoteVerifier instead of the in-process verifier — so several searches
// (suite mode, or several kz optimize processes) share one server's GPU slots, queue and
// deduplication. The task check goes as a `self_check` job. A sample the server cannot
// verify comes back as a `server_error` verdict: the iteration is spent, the run goes on.
#pragma once
#include <string>

#include "optimize/optimize_loop.h"

namespace kz::cli {

// false with *err when the server is unreachable or is not kz serve (GET /healthz).
bool MakeRemoteVerify(const std::string& url, double timing_ci, optimize::VerifyOne* out, std::string* err);

}  // namespace kz::cli
