#include "train/run_dir.h"

#include <algorithm>
#include <filesystem>

#include "scoring/verdict_log.h"
#include "util/fs.h"

namespace kz::train {
using nlohmann::json;

constexpr const char* kStateFormat = "kz.train_state/1";

bool RunDir::Open(const std::string& path, const std::string& config_text, std::string* err) {
  path_ = path;
  if (!util::MakeDirs(path + "/ckpt", err) || !util::MakeDirs(path + "/rollouts", err)) return false;
  std::string stored, why;
  if (!util::ReadFile(path + "/config.toml", &stored, &why))
    return util::WriteFileAtomic(path + "/config.toml", config_text, err);
  if (stored != config_text) {
    *err = path + " was started with another config (its config.toml differs from this one); resume with "
                  "the same config, or start a new run directory";
    return false;
  }
  return true;
}

bool RunDir::LoadState(RunState* out, std::string* err) const {
  std::string text, why;
  *out = {};
  if (!util::ReadFile(path_ + "/state.json", &text, &why)) return true;  // a new run
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || j.value("format", "") != kStateFormat || !j.contains("done") || !j["done"].is_array()) {
    *err = path_ + "/state.json is not a " + std::string(kStateFormat) + " file";
    return false;
  }
  for (const auto& u : j["done"]) out->done.push_back(u.get<std::string>());
  out->checkpoint = j.value("checkpoint", "");
  out->proposer_checkpoint = j.value("proposer_checkpoint", "");
  out->coder_seconds = j.value("coder_seconds", 0.0);
  return true;
}

bool RunDir::SaveState(const RunState& s, std::string* err) const {
  json j = {{"format", kStateFormat}, {"done", s.done}, {"checkpoint", s.checkpoint}};
  if (!s.proposer_checkpoint.empty()) j["proposer_checkpoint"] = s.proposer_checkpoint;
  if (s.coder_seconds > 0) j["coder_seconds"] = s.coder_seconds;
  return util::WriteFileAtomic(path_ + "/state.json", j.dump(1) + "\n", err);
}

bool RunDir::AppendMetrics(const json& line, std::string* err) const {
  scoring::VerdictLog log;  // the fsync'd line appender (a torn last line is cut on open)
  return log.Open(path_ + "/metrics.jsonl", err) && log.Append(line, err);
}

bool RunDir::UnitDir(const std::string& unit, std::string* dir, std::string* err) const {
  *dir = path_ + "/rollouts/" + unit;
  return util::MakeDirs(*dir + "/candidates", err);
}

void RunDir::PruneCheckpoints(const std::vector<std::string>& keep) const {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path_ + "/ckpt", ec)) {
    std::string p = e.path().string();
    if (std::find(keep.begin(), keep.end(), p) == keep.end()) util::RemoveAll(p);
  }
}

}  // namespace kz::train
