// kz-bench: the executable behind `kz bench --server` (docs/bench.md): the whole kz bench
// command plus the kz serve client on libcurl. A separate binary so that `kz` itself needs
// only libc (docs/decisions.md); kz execs it when --server is given.
#include "cli/commands.h"
#include "cli/sibling_main.h"
#include "scoring/remote_run.h"

int main(int argc, char** argv) {
  static kz::scoring::KzServeBackend remote;
  return kz::cli::SiblingMain(
      argc, argv, "kz bench — score generations, through kz serve with --server", "bench",
      [](CLI::App& app, const std::string& argv0) { return kz::cli::AddBenchCommand(app, argv0, &remote); });
}
