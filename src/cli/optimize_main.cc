// kz-optimize: the executable behind `kz optimize` (docs/optimize.md); separate so that `kz`
// itself needs only libc while the model client links libcurl.
#include "cli/commands.h"
#include "cli/sibling_main.h"

int main(int argc, char** argv) {
  return kz::cli::SiblingMain(argc, argv, "kz optimize — test-time kernel search", "optimize",
                              kz::cli::AddOptimizeCommand);
}
