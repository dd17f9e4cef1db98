// `kz train` (docs/training.md): today its `teacher` subcommand, the SFT cold start's
// verified (task, Triton kernel) pairs. Runs in the kz-train executable; kz execs it.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class TrainCommand {
 public:
  virtual ~TrainCommand() = default;
  virtual int Run() = 0;  // 0 ok, 1 some pairs not judged correct, 2 usage / bad input
};

// Registers `train` and its subcommands on `app`.
std::unique_ptr<TrainCommand> AddTrainCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
