// The run directory of `kz train` (docs/training.md, "The run directory"):
//   config.toml          the config the run started with (a resume must bring the same)
//   state.json           kz.train_state/1: the units done, in order, and the last checkpoint
//                        of each policy (the Coder's; the Proposer's when it trains)
//   tasks/               the valid modules the Proposer phase made: Coder tasks from then on
//   frontier.db          the frontier pool (curriculum/frontier_pool.h)
//   ckpt/<unit>/         the model after each training unit (the last two are kept)
//   rollouts/<unit>/     generation.json (the samples, kept so an interrupted unit does not
//                        sample again), candidates/, verdicts.jsonl (fsync'd, keyed: no sample
//                        is verified twice)
//   metrics.jsonl        one line per finished unit
// The state is replaced atomically after a unit's checkpoint is complete, so a kill at any
// point resumes at the first unit not listed, from the checkpoint listed.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::train {

struct RunState {
  std::vector<std::string> done;  // unit ids, in schedule order
  std::string checkpoint;         // the Coder to resume from; "" = the config's model
  std::string proposer_checkpoint;  // the Proposer's ("" = [proposer] model, else [model] path)
  double coder_seconds = 0;         // wall seconds of the Coder steps done ([coder] budget_s)
};

class RunDir {
 public:
  // Creates `path` with config.toml, or reopens it: then its config.toml must hold exactly
  // `config_text` (else an error saying so: another config would change the schedule).
  bool Open(const std::string& path, const std::string& config_text, std::string* err);
  bool LoadState(RunState* out, std::string* err) const;  // a new run: empty state
  bool SaveState(const RunState& s, std::string* err) const;
  bool AppendMetrics(const nlohmann::json& line, std::string* err) const;
  // rollouts/<unit> (created).
  bool UnitDir(const std::string& unit, std::string* dir, std::string* err) const;
  std::string CheckpointDir(const std::string& unit) const { return path_ + "/ckpt/" + unit; }
  // Removes checkpoints other than `keep` (the newest ones still needed).
  void PruneCheckpoints(const std::vector<std::string>& keep) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kz::train
