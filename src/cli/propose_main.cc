// kz-propose: the executable behind `kz propose` and `kz frontier` (docs/curriculum.md).
// A separate binary so that `kz` itself needs only libc while the frontier pool links SQLite and
// the Proposer loop libcurl (src/generate's client).
#include "cli/commands.h"
#include "cli/sibling_main.h"

int main(int argc, char** argv) {
  return kz::cli::SiblingMain(argc, argv, "kz propose / kz frontier — the curriculum", "propose",
                              kz::cli::AddProposeCommand);
}
