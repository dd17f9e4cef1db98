// `kz screen`: the static integrity screen of candidate files (docs/screen-rules.md), run
// through the worker op `screen` (no torch import, no candidate code executed).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class ScreenCommand {
 public:
  virtual ~ScreenCommand() = default;
  virtual int Run() = 0;  // the process exit code: 0 pass, 14 reject, 2 usage, 3 internal
};

std::unique_ptr<ScreenCommand> AddScreenCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
