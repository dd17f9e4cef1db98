// kz: KernelZero's command line.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/bench_command.h"
#include "cli/exec_sibling.h"
#include "cli/screen_command.h"
#include "cli/task_command.h"
#include "cli/verify_command.h"
#include "util/log.h"
#include "verify/status.h"

int main(int argc, char** argv) {
  CLI::App app{"kz — KernelZero: verify, benchmark and train kernel-writing models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "kz 0.1.0 (verdict schema kz.verdict/1, worker protocol 1)");
  bool quiet = false, debug = false;
  app.add_flag("-q,--quiet", quiet, "Only print results");
  app.add_flag("--debug", debug, "Verbose logs on stderr");
  auto verify = kz::cli::AddVerifyCommand(app, argv[0]);
  auto screen = kz::cli::AddScreenCommand(app, argv[0]);
  auto bench = kz::cli::AddBenchCommand(app, argv[0]);
  auto task = kz::cli::AddTaskCommand(app, argv[0]);
  // `kz serve` runs the separate kz-serve executable (it links the HTTP and SQLite
  // libraries that kz itself must not need); listed here for --help only.
  app.add_subcommand("serve", "Serve the verifier over HTTP (docs/api.md); `kz serve --help`")
      ->allow_extras()
      ->prefix_command();
  app.add_subcommand("worker", "Verify jobs from a Redis queue (docs/queue.md); `kz worker --help`")
      ->allow_extras()
      ->prefix_command();
  app.add_subcommand("generate", "Sample kernels from an OpenAI-compatible model (docs/generate.md); `kz generate --help`")
      ->allow_extras()
      ->prefix_command();
  app.add_subcommand("propose", "The curriculum: API catalog, co-occurrence, API sets (docs/curriculum.md)")
      ->allow_extras()
      ->prefix_command();
  app.add_subcommand("frontier", "The frontier pool: stats, list, export (docs/curriculum.md)")
      ->allow_extras()
      ->prefix_command();
  app.add_subcommand("optimize", "Test-time kernel search with a model and the verifier (docs/optimize.md); `kz optimize --help`")
      ->allow_extras()
      ->prefix_command();
  app.add_subcommand("train", "Training: the SFT teacher (docs/training.md); `kz train --help`")
      ->allow_extras()
      ->prefix_command();
  if (kz::cli::IsInvocationOf(argc, argv, "propose") || kz::cli::IsInvocationOf(argc, argv, "frontier"))
    return kz::cli::ExecSibling(argc, argv, "kz-propose");
  if (kz::cli::IsInvocationOf(argc, argv, "serve")) return kz::cli::ExecSibling(argc, argv, "kz-serve");
  if (kz::cli::IsInvocationOf(argc, argv, "train")) return kz::cli::ExecSibling(argc, argv, "kz-train");
  if (kz::cli::IsInvocationOf(argc, argv, "worker")) return kz::cli::ExecSibling(argc, argv, "kz-worker");
  if (kz::cli::IsInvocationOf(argc, argv, "optimize")) return kz::cli::ExecSibling(argc, argv, "kz-optimize");
  if (kz::cli::IsInvocationOf(argc, argv, "generate")) return kz::cli::ExecSibling(argc, argv, "kz-generate");
  if (kz::cli::IsBenchServerInvocation(argc, argv)) return kz::cli::ExecSibling(argc, argv, "kz-bench");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kz::verify::kExitUsage;
  }
  kz::util::SetLogLevel(quiet ? kz::util::LogLevel::kWarn : debug ? kz::util::LogLevel::kDebug
                                                                  : kz::util::LogLevel::kInfo);
  try {
    if (app.got_subcommand("screen")) return screen->Run();
    if (bench->Parsed()) return bench->Run();
    if (task->Parsed()) return task->Run();
    return verify->Run();
  } catch (const std::exception& e) {
    std::cerr << "kz: internal error: " << e.what() << "\n";
    return kz::verify::kExitInternal;
  }
}
