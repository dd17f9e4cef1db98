// `kz bench`: score a model's generations on a KernelBench-format suite (docs/bench.md);
// `kz bench report` recomputes the report from a finished or interrupted run.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class BenchCommand {
 public:
  virtual ~BenchCommand() = default;
  virtual bool Parsed() const = 0;
  virtual int Run() = 0;  // the process exit code
};

std::unique_ptr<BenchCommand> AddBenchCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
