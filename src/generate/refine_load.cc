#include "generate/refine_load.h"

#include "generate/run_log.h"
#include "scoring/verdict_log.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::generate {
namespace {
using nlohmann::json;

// The request the previous turn made for this sample: its "messages" (a refined turn) or the
// unit's prompt (turn 1).
std::vector<Message> PreviousRequest(const json& record, const Unit& unit) {
  std::vector<Message> out;
  if (record.contains("messages") && record["messages"].is_array())
    for (const auto& m : record["messages"])
      if (m.is_object()) out.push_back({m.value("role", ""), m.value("content", "")});
  if (out.empty()) out.push_back({"user", unit.prompt});
  return out;
}

}  // namespace

bool LoadRefinement(const RefineSource& src, int samples, std::vector<Unit>* units, RefineCounts* counts,
                    std::string* err) {
  *counts = {};
  std::string jsonl = src.prev_run + "/generations.jsonl";
  if (!util::PathExists(jsonl)) return *err = "--refine " + src.prev_run + ": no generations.jsonl there", false;
  LoadedRun prev = LoadRun(jsonl);
  auto verdicts = scoring::LoadVerdictLog(src.verdicts).records;
  for (const auto& [key, r] : prev.records) counts->turn = std::max(counts->turn, r.value("turn", 1) + 1);
  for (Unit& u : *units) {
    u.conversations.assign(size_t(samples), {});
    for (int s = 0; s < samples; ++s) {
      auto it = prev.records.find({u.key, s});
      if (it == prev.records.end()) {
        ++counts->missing_previous;
        continue;
      }
      const json& r = it->second;
      std::string code = r.value("code", ""), reply;
      json verdict;
      if (r.contains("reason") && r["reason"].is_string()) {  // the previous reply had no code
        verdict = {{"status", "no_code"}, {"reason", r["reason"]}};
        reply = r.value("reply", "");
      } else {
        auto v = verdicts.find(scoring::ResumeKey(u.key, s, util::Hash128Hex(code)));
        if (v == verdicts.end() || !v->second.contains("verdict")) {
          ++counts->unverified;
          continue;
        }
        verdict = v->second["verdict"];
        reply = "```python\n" + code + (code.empty() || code.back() == '\n' ? "" : "\n") + "```";
      }
      if (verdict.value("status", "") == "correct") {
        ++counts->closed_correct;
        continue;
      }
      Conversation c = ExtendConversation(PreviousRequest(r, u), reply, verdict, src.prompt);
      counts->omitted_replies += c.omitted_replies;
      counts->feedback_cut += c.feedback_cut;
      u.conversations[size_t(s)] = std::move(c.messages);
      ++counts->open;
    }
  }
  return true;
}

}  // namespace kz::generate
