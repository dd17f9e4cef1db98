// kz: KernelZero's command line.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/exec_sibling.h"
#include "util/log.h"
#include "verify/status.h"

namespace {
// The subcommands that run in a sibling executable, which links libraries kz itself must not
// need (commands.h): declared here for --help, exec'd before kz parses anything.
struct Sibling {
  const char* name;
  const char* executable;
  const char* help;
};
constexpr Sibling kSiblings[] = {
    {"serve", "kz-serve", "Serve the verifier over HTTP (docs/api.md); `kz serve --help`"},
    {"worker", "kz-worker", "Verify jobs from a Redis queue (docs/queue.md); `kz worker --help`"},
    {"generate", "kz-generate",
     "Sample kernels from an OpenAI-compatible model (docs/generate.md); `kz generate --help`"},
    {"propose", "kz-propose", "The curriculum: API catalog, co-occurrence, API sets (docs/curriculum.md)"},
    {"frontier", "kz-propose", "The frontier pool: stats, list, export (docs/curriculum.md)"},
    {"optimize", "kz-optimize",
     "Test-time kernel search with a model and the verifier (docs/optimize.md); `kz optimize --help`"},
    {"train", "kz-train", "Training: the SFT teacher (docs/training.md); `kz train --help`"},
};
}  // namespace

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
  for (const auto& sibling : kSiblings) {
    app.add_subcommand(sibling.name, sibling.help)->allow_extras()->prefix_command();
    if (kz::cli::IsInvocationOf(argc, argv, sibling.name)) return kz::cli::ExecSibling(argc, argv, sibling.executable);
  }
  if (kz::cli::IsBenchServerInvocation(argc, argv)) return kz::cli::ExecSibling(argc, argv, "kz-bench");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kz::verify::kExitUsage;
  }
  kz::util::SetLogLevel(quiet   ? kz::util::LogLevel::kWarn
                        : debug ? kz::util::LogLevel::kDebug
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
