// Multi-turn refinement's prompts (docs/training.md, "Multi-turn refinement"; kz train's
// Coder steps and kz bench --turns): after each turn the model is answered with the
// verifier's facts about its kernel and asked again; the next turn's prompt is the whole
// conversation so far. Pure functions.
//
// Truncation rule (feedback or history longer than the context):
//   - a turn's feedback holds at most `feedback_chars` characters of the verifier's facts,
//     cut at a line end and marked "[... cut]" (verify::Diagnose);
//   - when the conversation's characters pass `context_chars`, earlier replies are replaced,
//     oldest first, by "[earlier reply omitted: N characters]"; the task (first message), the
//     latest reply and every feedback are never cut.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate/endpoint.h"

namespace kz::generate {

struct RefineOptions {
  size_t feedback_chars = 1500;
  size_t context_chars = 24000;
};

// The user message that answers a turn: the verifier's facts and what to do next (repair an
// incorrect kernel, speed up a correct one, or answer with code at all). A verdict
// {"status": "no_code", "reason": ...} stands for a reply without code.
std::string TurnFeedback(const nlohmann::json& verdict, size_t feedback_chars);

struct Conversation {
  std::vector<Message> messages;  // user, assistant, user, ..., ending with a user message
  int omitted_replies = 0;        // earlier replies replaced by the marker, in this call
  int feedback_cut = 0;           // feedbacks cut to feedback_chars, in this call
  size_t chars = 0;               // the messages' characters after the rule
};

// `so_far` (ending with a user message) answered by `reply`, then the feedback on `verdict`;
// the context rule applied to the whole.
Conversation ExtendConversation(std::vector<Message> so_far, const std::string& reply, const nlohmann::json& verdict,
                                const RefineOptions& o);

struct TurnRecord {
  std::string reply;       // the model's whole reply
  nlohmann::json verdict;  // the verifier's, or {"status": "no_code", "reason": ...}
};

// The prompt of the turn after `turns` (at least one): the task prompt, then each turn's reply
// and its feedback (ExtendConversation folded; the counts summed).
Conversation BuildConversation(const std::string& task_prompt, const std::vector<TurnRecord>& turns,
                               const RefineOptions& o);

}  // namespace kz::generate
