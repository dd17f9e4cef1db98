#include "optimize/run_store.h"

#include <fstream>
#include <sstream>

#include "bench/verdict_log.h"
#include "util/fs.h"

namespace kz::optimize {
using json = nlohmann::json;

json RunState::ToJson() const {
  json fixes = json::object();
  for (const auto& [island, id] : pending_fix) fixes[std::to_string(island)] = id;
  return {{"format", "kz.optimize.state/1"}, {"next_iteration", next_iteration}, {"islands", islands},
          {"budget", budget}, {"pending_fix", fixes}, {"stop_reason", stop_reason}};
}

std::optional<RunState> RunState::FromJson(const json& j, std::string* err) {
  if (!j.is_object() || j.value("format", "") != "kz.optimize.state/1" || !j.contains("next_iteration") ||
      !j["next_iteration"].is_number_integer() || !j.contains("islands") || !j.contains("budget") ||
      !j.contains("pending_fix") || !j["pending_fix"].is_object()) {
    *err = "not a kz.optimize.state/1 object";
    return std::nullopt;
  }
  RunState s;
  s.next_iteration = j["next_iteration"].get<int>();
  s.islands = j["islands"];
  s.budget = j["budget"];
  s.stop_reason = j.value("stop_reason", "");
  for (const auto& [k, v] : j["pending_fix"].items()) {
    if (!v.is_string()) {
      *err = "pending_fix: not a string";
      return std::nullopt;
    }
    s.pending_fix[std::stoi(k)] = v.get<std::string>();
  }
  return s;
}

namespace {
bool ReadJson(const std::string& path, json* out, std::string* err) {
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  *out = json::parse(text, nullptr, false);
  if (out->is_discarded()) {
    *err = path + ": not JSON (a corrupted run directory; remove it or pass another --out)";
    return false;
  }
  return true;
}
}  // namespace

bool RunStore::HasRun() const { return util::PathExists(Path("run.json")); }

bool RunStore::ReadRun(json* run, std::string* err) const {
  if (!ReadJson(Path("run.json"), run, err)) return false;
  if (!run->is_object() || run->value("format", "") != "kz.optimize.run/1") {
    *err = Path("run.json") + ": not a kz.optimize.run/1 file (a corrupted run directory)";
    return false;
  }
  return true;
}

bool RunStore::WriteRun(const json& run, std::string* err) const {
  return util::WriteFileAtomic(Path("run.json"), run.dump(1) + "\n", err);
}

std::optional<RunState> RunStore::ReadState(std::string* err) const {
  json j;
  if (!ReadJson(Path("state.json"), &j, err)) return std::nullopt;
  auto s = RunState::FromJson(j, err);
  if (!s) *err = Path("state.json") + ": " + *err + " (a corrupted run directory)";
  return s;
}

bool RunStore::WriteState(const RunState& s, std::string* err) const {
  return util::WriteFileAtomic(Path("state.json"), s.ToJson().dump(1) + "\n", err);
}

bool RunStore::LoadCandidates(int next_iteration, std::vector<json>* out, std::string* err) const {
  out->clear();
  std::ifstream in(Path("candidates.jsonl"));
  std::string line, kept;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || !r.contains("iteration") || !r["iteration"].is_number_integer()) {
      if (in.peek() == EOF) break;  // the last line torn by a kill
      *err = Path("candidates.jsonl") + ":" + std::to_string(n) + ": not a candidate record (a corrupted run directory)";
      return false;
    }
    if (r["iteration"].get<int>() >= next_iteration) continue;
    out->push_back(r);
    kept += line + "\n";
  }
  return util::WriteFileAtomic(Path("candidates.jsonl"), kept, err);
}

bool RunStore::AppendCandidate(const json& record, std::string* err) const {
  bench::VerdictLog log;
  return log.Open(Path("candidates.jsonl"), err) && log.Append(record, err);
}

std::map<std::string, json> RunStore::LoadVerdicts() const {
  std::map<std::string, json> out;
  std::ifstream in(Path("verdicts.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    json r = json::parse(line, nullptr, false);
    if (r.is_object() && r.contains("code_xxh") && r["code_xxh"].is_string() && r.contains("verdict"))
      out[r["code_xxh"].get<std::string>()] = r["verdict"];
  }
  return out;
}

bool RunStore::AppendVerdict(const std::string& code_xxh, const json& verdict, std::string* err) const {
  bench::VerdictLog log;
  return log.Open(Path("verdicts.jsonl"), err) && log.Append({{"code_xxh", code_xxh}, {"verdict", verdict}}, err);
}

bool RunStore::WriteCode(const std::string& id, const std::string& code, std::string* err) const {
  return util::MakeDirs(Path("candidates"), err) && util::WriteFileAtomic(Path("candidates/" + id + ".py"), code, err);
}

std::string RunStore::ReadCode(const std::string& id) const {
  std::string text, err;
  return util::ReadFile(Path("candidates/" + id + ".py"), &text, &err) ? text : "";
}

}  // namespace kz::optimize
