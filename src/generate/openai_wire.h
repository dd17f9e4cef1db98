// The OpenAI-compatible wire format, as pure functions: the request body, the reply
// parser, the per-choice token rule and the error-body excerpt. No I/O.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "generate/endpoint.h"

namespace kz::generate {

// "/chat/completions" or "/completions" (appended to the base URL, which ends in "/v1").
std::string ApiPath(Api api);

// The JSON body for `model`: messages or prompt, n, and the sampling fields that are set.
// "stream" is false: the whole reply comes in one body.
nlohmann::json RequestBody(const Request& request, const std::string& model);

// Parses a 200 body: a Reply, or kBadJson / kNoChoices. `sampling` feeds ChoiceTokens.
// A chat choice's message.content of null is "" (a tool call or a refusal).
Result ParseReply(const std::string& body, const Sampling& sampling);

// Token accounting, per choice. Servers differ: OpenAI and vLLM report usage summed over
// all choices; llama.cpp's server, with n > 1, reports one choice's count. The rule:
//  1. a choice that carries its own count (`completion_tokens`, `usage.completion_tokens`,
//     or llama.cpp's `tokens_predicted` / `timings.predicted_n`) keeps it;
//  2. otherwise the server's total T minus the counted choices is shared out among the
//     rest in proportion to their text's bytes (all of T when n = 1);
//  3. every choice is then raised to its lower bound: max_tokens when it ended with
//     finish_reason "length" (it used them all), else ceil(bytes / 8) (no tokenizer in use
//     puts more than 8 bytes of code in a token on average), at least 1 for a non-empty text.
// usage.completion_tokens becomes the sum; `corrected` says it exceeds the server's T.
// Fills c.completion_tokens of each choice of `reply`; `per_choice[i]` is choice i's own
// count or -1.
void ChoiceTokens(Reply* reply, const std::vector<long>& per_choice, const Sampling& sampling);

// A one-line excerpt of an error body: error.message when it is JSON like OpenAI's, else
// the first 200 bytes with control characters replaced.
std::string ErrorExcerpt(const std::string& body);

}  // namespace kz::generate
