// The `kz train --config` driver: opens (or resumes) the run directory, starts the trainer
// backend on the last checkpoint, and runs every unit of the schedule not yet done. After a
// unit that trained, the model is saved (with its optimizer state, so a resume continues
// exactly) and only then is the unit marked done. A backend that crashes or hangs is
// restarted from the last checkpoint and the unit retried once; a second failure stops the
// run with its state saved (run it again to resume).
#pragma once
#include <string>

#include "train/rollout.h"
#include "train/run_config.h"
#include "worker/worker_client.h"

namespace kz::train {

struct TrainLoopOptions {
  RunConfig config;          // paths already resolved
  std::string config_text;   // as read (stored in the run directory, compared on resume)
  std::string out;           // run directory
  std::string prompt_template;    // the Coder's
  std::string proposer_template;  // the Proposer's (with a [proposer] phase)
  worker::WorkerConfig worker;    // the curriculum's module_scan and validate children
  TrainerConfig trainer;
  VerifyFn verify;
};

// 0 when every unit is done; 1 when the run stopped (the reason on stderr; resumable);
// 2 for bad input (another config in the directory, unreadable tasks or data).
int RunTraining(const TrainLoopOptions& o);

}  // namespace kz::train
