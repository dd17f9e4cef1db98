// kz-worker: the executable behind `kz worker` (docs/queue.md). A separate binary so that
// `kz` itself needs only libc, while the worker links hiredis (statically where the
// distribution ships libhiredis.a). `kz worker ARGS` execs `kz-worker ARGS` from the same
// directory.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/worker_command.h"
#include "util/log.h"
#include "verify/status.h"

int main(int argc, char** argv) {
  CLI::App app{"kz worker — KernelZero's verification worker on a Redis job queue"};
  app.require_subcommand(1);
  bool quiet = false, debug = false;
  app.add_flag("-q,--quiet", quiet, "Only print warnings");
  app.add_flag("--debug", debug, "Verbose logs on stderr");
  auto worker = kz::cli::AddWorkerCommand(app, argv[0]);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kz::verify::kExitUsage;
  }
  kz::util::SetLogLevel(quiet ? kz::util::LogLevel::kWarn : debug ? kz::util::LogLevel::kDebug
                                                                  : kz::util::LogLevel::kInfo);
  try {
    return worker->Run();
  } catch (const std::exception& e) {
    std::cerr << "kz worker: internal error: " << e.what() << "\n";
    return kz::verify::kExitInternal;
  }
}
