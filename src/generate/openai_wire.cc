#include "generate/openai_wire.h"

#include <algorithm>
#include <utility>

namespace kz::generate {
using nlohmann::json;

std::string ApiPath(Api api) { return api == Api::kChat ? "/chat/completions" : "/completions"; }

json RequestBody(const Request& request, const std::string& model) {
  json body = {{"model", model}, {"stream", false}, {"n", request.sampling.n}};
  if (request.api == Api::kChat) {
    json messages = json::array();
    for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    body["messages"] = std::move(messages);
  } else {
    body["prompt"] = request.prompt;
  }
  const Sampling& s = request.sampling;
  if (s.temperature) body["temperature"] = *s.temperature;
  if (s.top_p) body["top_p"] = *s.top_p;
  if (s.max_tokens) body["max_tokens"] = *s.max_tokens;
  if (s.seed) body["seed"] = *s.seed;
  if (!s.stop.empty()) body["stop"] = s.stop;
  return body;
}

namespace {
long Count(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_integer() ? j[key].get<long>() : -1;
}

// A choice's own completion-token count, or -1.
long OwnCount(const json& c) {
  for (long v : {Count(c, "completion_tokens"), Count(c.value("usage", json()), "completion_tokens"),
                 Count(c, "tokens_predicted"), Count(c.value("timings", json()), "predicted_n")})
    if (v >= 0) return v;
  return -1;
}

// The text of one choice, or false when it has none of the expected shape.
bool ChoiceText(const json& c, std::string* text) {
  if (!c.is_object()) return false;
  if (c.contains("message") && c["message"].is_object()) {
    const json& content = c["message"].value("content", json());
    if (content.is_null()) return text->clear(), true;
    if (!content.is_string()) return false;
    return *text = content.get<std::string>(), true;
  }
  if (c.contains("text") && c["text"].is_string()) return *text = c["text"].get<std::string>(), true;
  return false;
}
}  // namespace

void ChoiceTokens(Reply* reply, const std::vector<long>& per_choice, const Sampling& sampling) {
  long total = reply->usage.server_completion_tokens, counted = 0;
  size_t rest_bytes = 0;
  for (size_t i = 0; i < reply->choices.size(); ++i) {
    if (per_choice[i] >= 0) counted += per_choice[i];
    else rest_bytes += reply->choices[i].text.size();
  }
  long rest = std::max(0L, total - counted), sum = 0;
  for (size_t i = 0; i < reply->choices.size(); ++i) {
    Choice& c = reply->choices[i];
    long bytes = static_cast<long>(c.text.size());
    long n = per_choice[i] >= 0 ? per_choice[i]
             : rest_bytes ? static_cast<long>(static_cast<double>(rest) * bytes / rest_bytes + 0.5)
                          : 0;
    long bound = c.finish_reason == "length" && sampling.max_tokens ? *sampling.max_tokens : (bytes + 7) / 8;
    if (per_choice[i] < 0) n = std::max(n, bound);
    c.completion_tokens = n;
    sum += n;
  }
  reply->usage.completion_tokens = std::max(sum, total);
  reply->usage.corrected = reply->usage.completion_tokens > total;
}

Result ParseReply(const std::string& body, const Sampling& sampling) {
  Result r;
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    r.outcome = Error{ErrorKind::kBadJson, 0, "the reply is not a JSON object: " + ErrorExcerpt(body)};
    return r;
  }
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
    r.outcome = Error{ErrorKind::kNoChoices, 0, "the reply has no \"choices\": " + ErrorExcerpt(body)};
    return r;
  }
  std::vector<std::pair<long, json>> ordered;
  for (size_t i = 0; i < j["choices"].size(); ++i) {
    long index = Count(j["choices"][i], "index");
    ordered.emplace_back(index >= 0 ? index : static_cast<long>(i), j["choices"][i]);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Reply reply;
  std::vector<long> own;
  for (const auto& [index, c] : ordered) {
    Choice choice;
    if (!ChoiceText(c, &choice.text)) {
      r.outcome = Error{ErrorKind::kNoChoices, 0, "choice " + std::to_string(index) + " has no message or text"};
      return r;
    }
    const json& fr = c.value("finish_reason", json());
    choice.finish_reason = fr.is_string() ? fr.get<std::string>() : "";
    own.push_back(OwnCount(c));
    reply.choices.push_back(std::move(choice));
  }
  const json u = j.value("usage", json::object());
  reply.usage.prompt_tokens = std::max(0L, Count(u, "prompt_tokens"));
  reply.usage.server_completion_tokens = std::max(0L, Count(u, "completion_tokens"));
  reply.usage.reasoning_tokens = std::max(0L, Count(u.value("completion_tokens_details", json()), "reasoning_tokens"));
  reply.model = j.contains("model") && j["model"].is_string() ? j["model"].get<std::string>() : "";
  ChoiceTokens(&reply, own, sampling);
  r.outcome = std::move(reply);
  return r;
}

std::string ErrorExcerpt(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
  }
  std::string out = body.substr(0, 200);
  for (char& ch : out)
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  if (body.size() > 200) out += "...";
  return out.empty() ? "(empty body)" : out;
}

}  // namespace kz::generate
