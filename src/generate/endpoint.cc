#include "generate/endpoint.h"

#include <array>
#include <cstdio>
#include <utility>

#include "scoring/generations.h"

namespace kz::generate {
using nlohmann::json;

namespace {
constexpr std::array<std::pair<ErrorKind, const char*>, 11> kKinds = {{
    {ErrorKind::kConnect, "connect"},
    {ErrorKind::kDns, "dns"},
    {ErrorKind::kTls, "tls"},
    {ErrorKind::kHttpStatus, "http_status"},
    {ErrorKind::kBadJson, "bad_json"},
    {ErrorKind::kNoChoices, "no_choices"},
    {ErrorKind::kTooLarge, "too_large"},
    {ErrorKind::kTimeout, "timeout"},
    {ErrorKind::kCancelled, "cancelled"},
    {ErrorKind::kNotRecorded, "not_recorded"},
    {ErrorKind::kOther, "other"},
}};

// Text that is not UTF-8 cannot be a JSON string: it is kept as hex beside a readable copy,
// so that a replayed reply has the very bytes of the recorded one.
void PutText(json& j, const std::string& text) {
  if (scoring::IsValidUtf8(text)) return void(j["text"] = text);
  j["text"] = scoring::ReplaceInvalidUtf8(text);
  std::string hex;
  char b[3];
  for (unsigned char c : text) std::snprintf(b, sizeof b, "%02x", c), hex += b;
  j["text_hex"] = hex;
}

std::string GetText(const json& c) {
  if (!c.contains("text_hex") || !c["text_hex"].is_string()) return c["text"].get<std::string>();
  const std::string hex = c["text_hex"].get<std::string>();
  auto nibble = [](char h) { return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return c["text"].get<std::string>();
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

long Long(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<long>() : 0;
}
}  // namespace

const char* ErrorKindName(ErrorKind kind) {
  for (const auto& [k, name] : kKinds)
    if (k == kind) return name;
  return "other";
}

std::optional<ErrorKind> ParseErrorKind(const std::string& name) {
  for (const auto& [k, n] : kKinds)
    if (name == n) return k;
  return std::nullopt;
}

json ResultToJson(const Result& r) {
  json j = {{"latency_s", r.latency_s}, {"attempts", r.attempts}};
  if (const Error* e = r.error()) {
    j["error"] = {{"kind", ErrorKindName(e->kind)}, {"http_status", e->http_status}, {"message", e->message}};
    return j;
  }
  const Reply& p = *r.reply();
  json choices = json::array();
  for (const auto& c : p.choices) {
    json choice = {{"finish_reason", c.finish_reason}, {"completion_tokens", c.completion_tokens}};
    PutText(choice, c.text);
    choices.push_back(std::move(choice));
  }
  j["reply"] = {{"choices", choices},
                {"model", p.model},
                {"usage",
                 {{"prompt_tokens", p.usage.prompt_tokens},
                  {"completion_tokens", p.usage.completion_tokens},
                  {"reasoning_tokens", p.usage.reasoning_tokens},
                  {"server_completion_tokens", p.usage.server_completion_tokens},
                  {"corrected", p.usage.corrected}}}};
  return j;
}

std::optional<Result> ResultFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Result r;
  r.latency_s = j.contains("latency_s") && j["latency_s"].is_number() ? j["latency_s"].get<double>() : 0;
  r.attempts = static_cast<int>(Long(j, "attempts"));
  if (j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    auto kind = ParseErrorKind(e.value("kind", std::string()));
    if (!kind) return std::nullopt;
    r.outcome = Error{*kind, static_cast<int>(Long(e, "http_status")), e.value("message", std::string())};
    return r;
  }
  if (!j.contains("reply") || !j["reply"].is_object() || !j["reply"].contains("choices") ||
      !j["reply"]["choices"].is_array() || j["reply"]["choices"].empty())
    return std::nullopt;
  const json& p = j["reply"];
  Reply reply;
  for (const auto& c : p["choices"]) {
    if (!c.is_object() || !c.contains("text") || !c["text"].is_string()) return std::nullopt;
    reply.choices.push_back({GetText(c), c.value("finish_reason", std::string()),
                             Long(c, "completion_tokens")});
  }
  reply.model = p.value("model", std::string());
  const json u = p.value("usage", json::object());
  reply.usage = {Long(u, "prompt_tokens"), Long(u, "completion_tokens"), Long(u, "reasoning_tokens"),
                 Long(u, "server_completion_tokens"), u.value("corrected", false)};
  r.outcome = std::move(reply);
  return r;
}

}  // namespace kz::generate
