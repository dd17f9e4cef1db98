#include "train/refine_prompt.h"

#include "verify/feedback.h"

namespace kz::train {
namespace {
constexpr const char* kAnswer = "Answer with the complete module (class ModelNew and everything it needs) in one ```python block.";
constexpr const char* kCutMark = "[... cut]";
}  // namespace

std::string TurnFeedback(const nlohmann::json& verdict, size_t feedback_chars) {
  const std::string status = verdict.is_object() ? verdict.value("status", "") : "";
  if (status == "no_code")
    return std::string("Your reply had no code the verifier could run (") + verdict.value("reason", "no code block") +
           "). " + kAnswer;
  std::string facts = verify::Diagnose(verdict, feedback_chars);
  if (status == "correct")
    return "The verifier ran your kernel: it is correct.\n" + facts +
           "Make it faster while keeping it correct. " + kAnswer;
  return "The verifier ran your kernel: it is not correct.\n" + facts + "Fix the problem. " + kAnswer;
}

Conversation BuildConversation(const std::string& task_prompt, const std::vector<TurnRecord>& turns,
                               const RefineOptions& o) {
  Conversation c;
  c.messages.push_back({"user", task_prompt});
  for (const auto& t : turns) {
    std::string feedback = TurnFeedback(t.verdict, o.feedback_chars);
    c.feedback_cut += feedback.find(kCutMark) != std::string::npos;
    c.messages.push_back({"assistant", t.reply});
    c.messages.push_back({"user", std::move(feedback)});
  }
  for (const auto& m : c.messages) c.chars += m.content.size();
  // Earlier replies (message 1, 3, ...: all but the latest, at size - 2) go first, oldest first.
  for (size_t i = 1; c.chars > o.context_chars && i + 2 < c.messages.size(); i += 2) {
    std::string marker = "[earlier reply omitted: " + std::to_string(c.messages[i].content.size()) + " characters]";
    if (marker.size() >= c.messages[i].content.size()) continue;  // nothing to gain
    c.chars = c.chars - c.messages[i].content.size() + marker.size();
    c.messages[i].content = std::move(marker);
    ++c.omitted_replies;
  }
  return c;
}

}  // namespace kz::train
