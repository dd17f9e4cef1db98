#include "optimize/run_store.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "scoring/verdict_log.h"
#include "util/fs.h"

namespace kz::optimize {
using json = nlohmann::json;

std::string PrettyJson(const json& j) { return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n"; }

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
  if (!j.value("stop_reason", json("")).is_string()) {
    *err = "stop_reason: not a string";
    return std::nullopt;
  }
  s.stop_reason = j.value("stop_reason", "");
  for (const auto& [k, v] : j["pending_fix"].items()) {
    if (!v.is_string() || k.empty() || k.size() > 4 || !std::all_of(k.begin(), k.end(), ::isdigit)) {
      *err = "pending_fix: not {island: id}";
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
  return util::WriteFileAtomic(Path("state.json"), PrettyJson(s.ToJson()), err);
}

namespace {
// The fields the loop reads from a record, with their types.
bool ValidRecord(const json& r, std::string* why) {
  auto is = [&](const char* k, bool (json::*pred)() const) { return !r.contains(k) || (r[k].*pred)(); };
  if (!r.is_object() || !r.contains("iteration") || !r["iteration"].is_number_integer()) return *why = "no iteration", false;
  for (const char* k : {"id", "outcome"})
    if (!r.contains(k) || !r[k].is_string()) return *why = std::string(k) + ": not a string", false;
  for (const char* k : {"status", "reason", "parent", "lineage", "other", "mutation", "code_xxh"})
    if (!is(k, &json::is_string)) return *why = std::string(k) + ": not a string", false;
  for (const char* k : {"kept", "clears_parent"})
    if (!is(k, &json::is_boolean)) return *why = std::string(k) + ": not a boolean", false;
  if (!is("speedup", &json::is_number)) return *why = "speedup: not a number", false;
  if (r.contains("spent")) {
    if (!r["spent"].is_object()) return *why = "spent: not an object", false;
    for (const auto& [k, v] : r["spent"].items())
      if (!v.is_number()) return *why = "spent." + k + ": not a number", false;
  }
  if (r.contains("change") && (!r["change"].is_object() || !r["change"].value("signature", json("")).is_string() ||
                               !r["change"].value("summary", json("")).is_string()))
    return *why = "change: not {signature, summary}", false;
  if (r.contains("cell") && (!r["cell"].is_array() || !std::all_of(r["cell"].begin(), r["cell"].end(),
                                                                   [](const json& c) { return c.is_number_integer(); })))
    return *why = "cell: not a list of integers", false;
  if (r.contains("speedup_ci95") && (!r["speedup_ci95"].is_array() || r["speedup_ci95"].size() != 2 ||
                                     !r["speedup_ci95"][0].is_number() || !r["speedup_ci95"][1].is_number()))
    return *why = "speedup_ci95: not two numbers", false;
  if (r.contains("experience") && (!r["experience"].is_object() || !r["experience"].value("id", json(0)).is_number_integer()))
    return *why = "experience: not a record", false;
  return true;
}
}  // namespace

bool RunStore::LoadCandidates(int next_iteration, bool with_initial, std::vector<json>* out, std::string* err) const {
  out->clear();
  std::string text, kept, ignored;
  if (util::PathExists(Path("candidates.jsonl")) && !util::ReadFile(Path("candidates.jsonl"), &text, err)) return false;
  size_t pos = 0;
  int n = 0;
  std::vector<int> want;
  want.push_back(-2);
  if (with_initial) want.push_back(-1);
  for (int i = 0; i < next_iteration; ++i) want.push_back(i);
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;  // the last line, torn by a kill: dropped
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++n;
    json r = json::parse(line, nullptr, false);
    std::string why;
    if (r.is_discarded() || !ValidRecord(r, &why)) {
      *err = Path("candidates.jsonl") + ":" + std::to_string(n) + ": not a candidate record" +
             (why.empty() ? "" : " (" + why + ")") + ": a corrupted run directory";
      return false;
    }
    int it = r["iteration"].get<int>();
    if (it >= next_iteration) continue;
    if (out->size() >= want.size() || it != want[out->size()]) {
      *err = Path("candidates.jsonl") + ":" + std::to_string(n) + ": iteration " + std::to_string(it) +
             " out of order (expected " + (out->size() < want.size() ? std::to_string(want[out->size()]) : "none") +
             "): a corrupted run directory";
      return false;
    }
    out->push_back(r);
    kept += line + "\n";
  }
  if (out->size() != want.size()) {
    *err = Path("candidates.jsonl") + ": " + std::to_string(out->size()) + " records where state.json needs " +
           std::to_string(want.size()) + ": a corrupted run directory";
    return false;
  }
  return util::WriteFileAtomic(Path("candidates.jsonl"), kept, err);
}

bool RunStore::HasIterationWork() const {
  std::string text, err;
  if (util::ReadFile(Path("transcript.jsonl"), &text, &err) && !text.empty()) return true;
  std::ifstream in(Path("candidates.jsonl"));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line, nullptr, false);
    if (!r.is_object() || !r.contains("iteration") || !r["iteration"].is_number_integer() || r["iteration"].get<int>() >= 0)
      return true;
  }
  return false;
}

bool RunStore::AppendCandidate(const json& record, std::string* err) const {
  scoring::VerdictLog log;
  return log.Open(Path("candidates.jsonl"), err) && log.Append(record, err);
}

std::map<std::string, json> RunStore::LoadVerdicts() const {
  std::map<std::string, json> out;
  std::ifstream in(Path("verdicts.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    json r = json::parse(line, nullptr, false);
    if (r.is_object() && r.contains("code_xxh") && r["code_xxh"].is_string() && r.contains("verdict"))
      out.emplace(r["code_xxh"].get<std::string>(), r["verdict"]);
  }
  return out;
}

bool RunStore::AppendVerdict(const std::string& code_xxh, const json& verdict, std::string* err) const {
  scoring::VerdictLog log;
  return log.Open(Path("verdicts.jsonl"), err) && log.Append({{"code_xxh", code_xxh}, {"verdict", verdict}}, err);
}

std::map<int, json> RunStore::LoadRetrievals() const {
  std::map<int, json> out;
  std::ifstream in(Path("retrievals.jsonl"));
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line, nullptr, false);
    if (r.is_object() && r.contains("iteration") && r["iteration"].is_number_integer())
      out.emplace(r["iteration"].get<int>(), r);
  }
  return out;
}

bool RunStore::AppendRetrieval(int iteration, const std::string& query, const json& experience,
                               const std::string& ranking, std::string* err) const {
  scoring::VerdictLog log;
  return log.Open(Path("retrievals.jsonl"), err) &&
         log.Append({{"iteration", iteration}, {"query", query}, {"experience", experience}, {"ranking", ranking}}, err);
}

bool RunStore::WriteCode(const std::string& id, const std::string& code, std::string* err) const {
  return util::MakeDirs(Path("candidates"), err) && util::WriteFileAtomic(Path("candidates/" + id + ".py"), code, err);
}

std::string RunStore::ReadCode(const std::string& id) const {
  std::string text, err;
  return util::ReadFile(Path("candidates/" + id + ".py"), &text, &err) ? text : "";
}

}  // namespace kz::optimize
