// kz-train: the executable behind `kz train` (docs/training.md). A sibling of kz so that kz
// itself needs only libc while training links the generation client's prompts and, later,
// the frontier pool (SQLite).
#include "cli/commands.h"
#include "cli/sibling_main.h"

int main(int argc, char** argv) {
  return kz::cli::SiblingMain(argc, argv, "kz train — training KernelZero's Coder and Proposer", "train",
                              kz::cli::AddTrainCommand);
}
