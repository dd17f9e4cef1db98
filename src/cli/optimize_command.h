// `kz optimize`: test-time search for one task's kernel (docs/optimize.md). Runs in the
// kz-optimize executable (libcurl for the model client); `kz optimize` execs it.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class OptimizeCommand {
 public:
  virtual ~OptimizeCommand() = default;
  // 0: the run ended (iterations done or budget reached); 2: refused (bad flags, a task that
  // cannot be verified, a corrupted or busy run directory); 3: a failure mid-run.
  virtual int Run() = 0;
};

std::unique_ptr<OptimizeCommand> AddOptimizeCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
