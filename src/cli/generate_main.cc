// kz-generate: the executable behind `kz generate` (docs/generate.md). A separate binary
// so that `kz` itself needs only libc while the model client links libcurl.
#include "cli/commands.h"
#include "cli/sibling_main.h"

int main(int argc, char** argv) {
  return kz::cli::SiblingMain(argc, argv, "kz generate — sample kernels from a model", "generate",
                              kz::cli::AddGenerateCommand);
}
