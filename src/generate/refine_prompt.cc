#include "generate/refine_prompt.h"

#include "verify/feedback.h"

namespace kz::generate {
namespace {
constexpr const char* kAnswer =
    "Answer with the complete module (class ModelNew and everything it needs) in one ```python block.";
constexpr const char* kCutMark = "[... cut]";
constexpr const char* kOmitted = "[earlier reply omitted: ";
}  // namespace

std::string TurnFeedback(const nlohmann::json& verdict, size_t feedback_chars) {
  const std::string status = verdict.is_object() ? verdict.value("status", "") : "";
  if (status == "no_code")
    return std::string("Your reply had no code the verifier could run (") + verdict.value("reason", "no code block") +
           "). " + kAnswer;
  std::string facts = verify::Diagnose(verdict, feedback_chars);
  if (status == "correct")
    return "The verifier ran your kernel: it is correct.\n" + facts + "Make it faster while keeping it correct. " +
           kAnswer;
  return "The verifier ran your kernel: it is not correct.\n" + facts + "Fix the problem. " + kAnswer;
}

Conversation ExtendConversation(std::vector<Message> so_far, const std::string& reply, const nlohmann::json& verdict,
                                const RefineOptions& o) {
  Conversation c;
  c.messages = std::move(so_far);
  std::string feedback = TurnFeedback(verdict, o.feedback_chars);
  c.feedback_cut += feedback.find(kCutMark) != std::string::npos;
  c.messages.push_back({"assistant", reply});
  c.messages.push_back({"user", std::move(feedback)});
  for (const auto& m : c.messages) c.chars += m.content.size();
  // Earlier replies (the assistant messages before the latest, at size - 2) go first, oldest first.
  for (size_t i = 1; c.chars > o.context_chars && i + 2 < c.messages.size(); ++i) {
    std::string& content = c.messages[i].content;
    if (c.messages[i].role != "assistant" || content.rfind(kOmitted, 0) == 0) continue;
    std::string marker = kOmitted + std::to_string(content.size()) + " characters]";
    if (marker.size() >= content.size()) continue;  // nothing to gain
    c.chars = c.chars - content.size() + marker.size();
    content = std::move(marker);
    ++c.omitted_replies;
  }
  return c;
}

Conversation BuildConversation(const std::string& task_prompt, const std::vector<TurnRecord>& turns,
                               const RefineOptions& o) {
  Conversation c;
  c.messages.push_back({"user", task_prompt});
  for (const auto& t : turns) {
    Conversation next = ExtendConversation(std::move(c.messages), t.reply, t.verdict, o);
    next.omitted_replies += c.omitted_replies;
    next.feedback_cut += c.feedback_cut;
    c = std::move(next);
  }
  return c;
}

}  // namespace kz::generate
