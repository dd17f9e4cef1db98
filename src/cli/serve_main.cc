// kz-serve: the service executable behind `kz serve` (docs/api.md). A separate binary so
// that `kz` itself needs only libc (it is carried to GPU hosts), while the service links
// cpp-httplib and SQLite. `kz serve ARGS` execs `kz-serve ARGS` from the same directory.
#include "cli/commands.h"
#include "cli/sibling_main.h"

int main(int argc, char** argv) {
  return kz::cli::SiblingMain(argc, argv, "kz serve — KernelZero's verification service", "serve",
                              kz::cli::AddServeCommand);
}
