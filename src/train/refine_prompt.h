// Multi-turn refinement's prompts (docs/training.md, "Multi-turn refinement"): after each
// turn the Coder is answered with the verifier's facts about its kernel and asked again; the
// next turn's prompt is the whole conversation so far. Pure functions.
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

#include "train/protocol.h"

namespace kz::train {

struct RefineOptions {
  size_t feedback_chars = 1500;
  size_t context_chars = 24000;
};

struct TurnRecord {
  std::string reply;       // the model's whole reply
  nlohmann::json verdict;  // the verifier's, or {"status": "no_code", "reason": ...}
};

// The user message that answers a turn: the verifier's facts and what to do next (repair an
// incorrect kernel, speed up a correct one, or answer with code at all).
std::string TurnFeedback(const nlohmann::json& verdict, size_t feedback_chars);

struct Conversation {
  std::vector<ChatMessage> messages;  // user, assistant, user, ..., ending with a user message
  int omitted_replies = 0;            // earlier replies replaced by the marker
  int feedback_cut = 0;               // feedbacks cut to feedback_chars
  size_t chars = 0;                   // the messages' characters after the rule
};

// The prompt of the turn after `turns` (at least one): the task prompt, then each turn's reply
// and its feedback.
Conversation BuildConversation(const std::string& task_prompt, const std::vector<TurnRecord>& turns,
                               const RefineOptions& o);

}  // namespace kz::train
