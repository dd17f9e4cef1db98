// `kz worker`: a verification worker on a Redis Streams job queue (docs/queue.md).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class WorkerCommand {
 public:
  virtual ~WorkerCommand() = default;
  virtual int Run() = 0;  // the process exit code: 0 after a graceful shutdown
};

std::unique_ptr<WorkerCommand> AddWorkerCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
