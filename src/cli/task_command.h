// `kz task check TASK.py`: whether kz can judge a reference task on this device and what it
// costs (footprint before allocation, the reference's time and peak memory, determinism,
// input sensitivity, finite and non-degenerate outputs), through the worker op `task_check`
// (docs/cli.md, docs/worker-protocol.md).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class TaskCommand {
 public:
  virtual ~TaskCommand() = default;
  virtual bool Parsed() const = 0;  // `kz task ...` was given
  // The process exit code, as kz verify's: 0 ok, 15 invalid_task, 13 timeout, 2 usage
  // (missing file, bad flag, no such GPU), 3 internal (the worker failed).
  virtual int Run() = 0;
};

std::unique_ptr<TaskCommand> AddTaskCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
