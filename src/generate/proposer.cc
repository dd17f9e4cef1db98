#include "generate/proposer.h"

#include <cctype>
#include <iostream>
#include <set>
#include <sstream>

#include "scoring/generations.h"
#include "generate/sample_run.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::generate {
namespace {
using nlohmann::json;

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 100 || id[0] == '.') return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

class ProposalWriter : public SampleWriter {
 public:
  explicit ProposalWriter(const std::vector<ApiSet>& sets) : sets_(sets) {}
  std::string CodeFile(size_t unit, int sample) const override { return ModuleFileName(sets_[unit].id, sample); }
  json Record(size_t unit, const SampleOutcome& s) const override {
    json j = CommonRecord(s);
    j["format"] = ProposalFormat().format;
    j["set"] = sets_[unit].id;
    j["apis"] = sets_[unit].apis;
    return j;
  }

 private:
  const std::vector<ApiSet>& sets_;
};

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}
}  // namespace

bool ParseApiSet(const std::string& line, ApiSet* out, std::string* err) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return *err = "not a JSON object", false;
  if (!j.contains("id") || !j["id"].is_string() || !ValidId(j["id"].get<std::string>()))
    return *err = "\"id\" must be a string of 1-100 letters, digits, '.', '_' or '-' (it names files)", false;
  if (!j.contains("apis") || !j["apis"].is_array() || j["apis"].empty())
    return *err = "\"apis\" must be a non-empty array of API names", false;
  out->id = j["id"].get<std::string>();
  out->apis.clear();
  for (const auto& a : j["apis"]) {
    if (!a.is_string() || a.get<std::string>().empty()) return *err = "\"apis\" holds a non-string or empty name", false;
    out->apis.push_back(a.get<std::string>());
  }
  return true;
}

bool ReadApiSets(const std::string& path, std::vector<ApiSet>* sets, std::vector<std::string>* bad, std::string* err) {
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  if (!scoring::IsValidUtf8(text)) return *err = path + ": not valid UTF-8", false;
  std::istringstream in(text);
  std::set<std::string> ids;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ApiSet s;
    std::string why;
    if (!ParseApiSet(line, &s, &why)) bad->push_back(path + ":" + std::to_string(n) + ": " + why);
    else if (!ids.insert(s.id).second) bad->push_back(path + ":" + std::to_string(n) + ": id \"" + s.id + "\" repeated");
    else sets->push_back(std::move(s));
  }
  return true;
}

RunFormat ProposalFormat() { return {"proposals.jsonl", "kz.proposal/1", "set"}; }

std::string ModuleFileName(const std::string& set_id, int sample) {
  return "modules/" + set_id + "_sample_" + std::to_string(sample) + ".py";
}

int RunPropose(const ProposeOptions& o, const std::vector<ApiSet>& sets, const PromptTemplate& prompt,
               Endpoint* endpoint, std::atomic<bool>* cancel) {
  std::vector<Unit> units;
  for (const auto& s : sets) {
    std::string text, why;
    if (!RenderTemplate(prompt.text, {{"api_set", Join(s.apis, ", ")}, {"set_id", s.id}}, &text, &why)) {
      std::cerr << "kz generate: " << prompt.name << ": " << why << "\n";
      return 2;
    }
    units.push_back({s.id, text, util::Hash128Hex(text)});
  }
  SampleRunOptions so;
  so.format = ProposalFormat();
  so.out_dir = o.out_dir;
  so.model = o.model;
  so.prompt_name = prompt.name;
  so.summary_extra = {{"mode", "proposer"}, {"sets", sets.size()}, {"samples_per_set", o.samples}};
  so.samples = o.samples;
  so.concurrency = o.concurrency;
  so.api = o.api;
  so.sampling = o.sampling;
  so.deadline_s = o.deadline_s;
  so.proposer = true;
  so.skipped = o.skipped;
  ProposalWriter writer(sets);
  return RunSamples(so, units, writer, endpoint, cancel);
}

}  // namespace kz::generate
