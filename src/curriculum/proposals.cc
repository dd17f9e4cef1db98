#include "curriculum/proposals.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "util/fs.h"
#include "util/hash.h"

namespace kz::curriculum {
using nlohmann::json;

namespace {
bool ParseRecord(const json& j, const std::string& run_dir, ProposalRecord* r, std::string* why) {
  if (!j.is_object() || j.value("format", "") != "kz.proposal/1") return *why = "not a kz.proposal/1 record", false;
  if (!j.contains("set") || !j["set"].is_string() || !j.contains("sample") || !j["sample"].is_number_integer())
    return *why = "no set or sample", false;
  r->set = j["set"];
  r->sample = j["sample"];
  if (r->set.empty() || r->set.find('/') != std::string::npos || r->set[0] == '.') return *why = "bad set id", false;
  for (const auto& a : j.value("apis", json::array()))
    if (a.is_string()) r->apis.push_back(a);
  r->code = j.contains("code") && j["code"].is_string() ? j["code"].get<std::string>() : "";
  r->reason = j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "";
  if (r->code.empty() && r->reason.empty()) r->reason = "empty_reply";
  r->code_xxh = r->code.empty() ? "" : util::Hash128Hex(r->code);
  r->module_path = run_dir + "/modules/" + r->set + "_sample_" + std::to_string(r->sample) + ".py";
  return true;
}
}  // namespace

bool ReadProposals(const std::string& run_dir, std::vector<ProposalRecord>* out, std::vector<std::string>* bad,
                   std::string* err) {
  std::string text, path = run_dir + "/proposals.jsonl";
  if (!util::ReadFile(path, &text, err)) return false;
  std::map<std::pair<std::string, int>, size_t> at;
  std::stringstream in(text);
  int line_no = 0;
  out->clear();
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ProposalRecord r;
    std::string why;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !ParseRecord(j, run_dir, &r, &why)) {
      bad->push_back(path + ":" + std::to_string(line_no) + ": " + (j.is_discarded() ? "not JSON" : why));
      continue;
    }
    auto key = std::make_pair(r.set, r.sample);
    if (auto it = at.find(key); it != at.end()) {
      (*out)[it->second] = std::move(r);
    } else {
      at.emplace(key, out->size());
      out->push_back(std::move(r));
    }
  }
  return true;
}

json ApiSetLine(const Catalog& catalog, size_t index, const ApiSetDraw& d) {
  char id[32];
  std::snprintf(id, sizeof id, "s%06zu", index);
  json apis = json::array(), ids = json::array();
  for (size_t a : d.apis) {
    apis.push_back(catalog.api(a).qualified);
    ids.push_back(catalog.api(a).id);
  }
  return {{"id", id}, {"apis", apis}, {"ids", ids}, {"source", d.from_frontier ? "frontier" : "fresh"},
          {"epoch", d.epoch}};
}

}  // namespace kz::curriculum
