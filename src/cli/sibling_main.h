// The main() of kz's sibling executables (kz-serve, kz-worker), which `kz serve` and
// `kz worker` exec so that `kz` itself needs only libc: the global flags, the one
// subcommand `add_command(app, argv0)` registers, the log level, and internal errors
// reported as kExitInternal. Command: anything with `int Run()`.
#pragma once
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "util/log.h"
#include "verify/status.h"

namespace kz::cli {

template <class AddCommand>
int SiblingMain(int argc, char** argv, const std::string& title, const std::string& name, AddCommand add_command) {
  CLI::App app{title};
  app.require_subcommand(1);
  bool quiet = false, debug = false;
  app.add_flag("-q,--quiet", quiet, "Only print warnings");
  app.add_flag("--debug", debug, "Verbose logs on stderr");
  auto command = add_command(app, argv[0]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : verify::kExitUsage;
  }
  util::SetLogLevel(quiet ? util::LogLevel::kWarn : debug ? util::LogLevel::kDebug : util::LogLevel::kInfo);
  try {
    return command->Run();
  } catch (const std::exception& e) {
    std::cerr << "kz " << name << ": internal error: " << e.what() << "\n";
    return verify::kExitInternal;
  }
}

}  // namespace kz::cli
