// `kz generate`: sample kernels from an OpenAI-compatible model for a KernelBench-format
// suite into a run directory that `kz bench` scores (docs/generate.md). Runs in the
// kz-generate executable, which links libcurl; `kz generate` execs it.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class GenerateCommand {
 public:
  virtual ~GenerateCommand() = default;
  // The exit code of generate::RunGenerate, or 2 for bad flags or an unreadable --prompt
  // or --replay file.
  virtual int Run() = 0;
};

std::unique_ptr<GenerateCommand> AddGenerateCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
