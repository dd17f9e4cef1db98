// The RemoteBackend of `kz bench --server` (runner.h): kz serve over HTTP through
// RemoteVerifier (remote.h, on libcurl). Part of kz_scoring_remote, which only the kz-bench
// executable links: kz stays libc-only and execs kz-bench for --server.
#pragma once
#include "scoring/runner.h"

namespace kz::scoring {

class KzServeBackend : public RemoteBackend {
 public:
  bool Check(const BenchOptions& o, bool* usage, std::string* err) override;
  bool VerifyAll(const BenchOptions& o, const std::vector<RemoteJob>& jobs,
                 const std::function<void(size_t, const nlohmann::json&, const nlohmann::json&)>& on_done,
                 const std::function<void(const std::string&)>& note, std::string* err) override;
};

}  // namespace kz::scoring
