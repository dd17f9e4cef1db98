// `kz serve`: the verification service (docs/api.md) on one host.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class ServeCommand {
 public:
  virtual ~ServeCommand() = default;
  virtual int Run() = 0;  // the process exit code: 0 after a graceful shutdown
};

std::unique_ptr<ServeCommand> AddServeCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
