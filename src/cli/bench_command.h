// `kz bench`: score a model's generations on a KernelBench-format suite (docs/bench.md);
// `kz bench report` recomputes the report from a finished or interrupted run.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::scoring {
class RemoteBackend;
}

namespace kz::cli {

class BenchCommand {
 public:
  virtual ~BenchCommand() = default;
  virtual bool Parsed() const = 0;
  virtual int Run() = 0;  // the process exit code
};

// `remote`: --server's verifier (kz-bench passes one; kz passes none and execs kz-bench for
// --server, see IsBenchServerInvocation).
std::unique_ptr<BenchCommand> AddBenchCommand(CLI::App& app, const std::string& argv0,
                                              scoring::RemoteBackend* remote = nullptr);

// True for `kz bench ... --server URL` (before any `--`): kz hands it to kz-bench, which
// links libcurl.
bool IsBenchServerInvocation(int argc, char** argv);

}  // namespace kz::cli
