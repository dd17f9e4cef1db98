#include "train/refine_rollout.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

namespace kz::train {

bool RefineRollout(TrainerBackend& backend, const VerifyFn& verify, const std::vector<RolloutTask>& tasks,
                   const RefineRolloutOptions& o, const std::string& unit_dir, std::vector<Trajectory>* out,
                   RefineStats* stats, std::string* err, TrainerError* terr) {
  *stats = {};
  out->clear();
  std::error_code ec;
  std::filesystem::create_directories(unit_dir + "/candidates", ec);
  if (ec) return *err = "cannot create " + unit_dir + "/candidates: " + ec.message(), false;
  std::vector<RolloutSample> first;
  if (!Rollout(backend, verify, tasks, o.base, unit_dir, &first, err, terr)) return false;
  for (auto& s : first) out->push_back({s.task, s.sample, {std::move(s)}});
  std::sort(out->begin(), out->end(), [](const Trajectory& a, const Trajectory& b) {
    return std::tie(a.task, a.sample) < std::tie(b.task, b.sample);
  });
  stats->open_per_turn.push_back(int(out->size()));
  // Each trajectory's conversation so far, extended by one reply and its feedback per turn
  // (so every omission and cut is made, and counted, once).
  std::vector<std::vector<generate::Message>> convs(out->size());
  for (size_t i = 0; i < out->size(); ++i) {
    std::string prompt;
    if (!RenderCoderPrompt(tasks.at((*out)[i].task), o.base, &prompt, err)) return false;
    convs[i] = {{"user", std::move(prompt)}};
  }
  for (int turn = 2; turn <= o.turns; ++turn) {
    std::vector<size_t> open;
    for (size_t i = 0; i < out->size(); ++i)
      if (!(o.stop_on_correct && (*out)[i].turns.back().correct)) open.push_back(i);
    if (open.empty()) break;
    GenerateRequest req;
    std::vector<std::pair<size_t, int>> owners;
    for (size_t i : open) {
      const Trajectory& t = (*out)[i];
      generate::Conversation c =
          generate::ExtendConversation(std::move(convs[i]), t.turns.back().reply, t.turns.back().verdict, o.prompt);
      stats->omitted_replies += c.omitted_replies;
      stats->feedback_cut += c.feedback_cut;
      convs[i] = std::move(c.messages);
      std::vector<ChatMessage> messages;
      for (const auto& m : convs[i]) messages.push_back({m.role, m.content});
      req.conversations.push_back(std::move(messages));
      owners.emplace_back(t.task, t.sample);
    }
    req.n = 1;
    req.temperature = o.base.temperature;
    req.max_new_tokens = o.base.max_new_tokens;
    req.seed = int((int64_t(o.base.seed) + 7919LL * turn) % 1000000007);
    req.chat = true;
    std::string dir = unit_dir + "/turn" + std::to_string(turn);
    std::filesystem::create_directories(dir + "/candidates", ec);
    if (ec) return *err = "cannot create " + dir + "/candidates: " + ec.message(), false;
    GenerateResult g;
    if (!GenerateOnce(backend, req, dir + "/generation.json", &g, err, terr)) return false;
    // One reply per conversation, in request order (prompt_index k is conversation k).
    std::vector<std::pair<size_t, int>> by_sample;
    for (const auto& s : g.samples) by_sample.push_back(owners.at(size_t(s.prompt_index)));
    std::vector<RolloutSample> replies;
    if (!VerifyReplies(verify, tasks, o.base.backend, g, by_sample, dir, &replies, err)) return false;
    for (size_t k = 0; k < replies.size(); ++k)
      (*out)[open.at(size_t(g.samples[k].prompt_index))].turns.push_back(std::move(replies[k]));
    stats->open_per_turn.push_back(int(open.size()));
  }
  return true;
}

}  // namespace kz::train
