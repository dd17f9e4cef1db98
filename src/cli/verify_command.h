// `kz verify`: one sample (--ref/--candidate) or many (--manifest).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class VerifyCommand {
 public:
  virtual ~VerifyCommand() = default;
  virtual int Run() = 0;  // the process exit code
};

std::unique_ptr<VerifyCommand> AddVerifyCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
