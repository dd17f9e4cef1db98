// kz-worker: the executable behind `kz worker` (docs/queue.md). A separate binary so that
// `kz` itself needs only libc, while the worker links hiredis (statically where the
// distribution ships libhiredis.a). `kz worker ARGS` execs `kz-worker ARGS` from the same
// directory.
#include "cli/commands.h"
#include "cli/sibling_main.h"

int main(int argc, char** argv) {
  return kz::cli::SiblingMain(argc, argv, "kz worker — KernelZero's verification worker on a Redis job queue", "worker",
                              kz::cli::AddWorkerCommand);
}
