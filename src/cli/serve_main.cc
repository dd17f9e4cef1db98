// kz-serve: the service executable behind `kz serve` (docs/api.md). A separate binary so
// that `kz` itself needs only libc (it is carried to GPU hosts), while the service links
// cpp-httplib and SQLite. `kz serve ARGS` execs `kz-serve ARGS` from the same directory.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/serve_command.h"
#include "util/log.h"
#include "verify/status.h"

int main(int argc, char** argv) {
  CLI::App app{"kz serve — KernelZero's verification service"};
  app.require_subcommand(1);
  bool quiet = false, debug = false;
  app.add_flag("-q,--quiet", quiet, "Only print results");
  app.add_flag("--debug", debug, "Verbose logs on stderr");
  auto serve = kz::cli::AddServeCommand(app, argv[0]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kz::verify::kExitUsage;
  }
  kz::util::SetLogLevel(quiet ? kz::util::LogLevel::kWarn : debug ? kz::util::LogLevel::kDebug
                                                                  : kz::util::LogLevel::kInfo);
  try {
    return serve->Run();
  } catch (const std::exception& e) {
    std::cerr << "kz serve: internal error: " << e.what() << "\n";
    return kz::verify::kExitInternal;
  }
}
