// The Endpoint interface: one completion request to a language model, and its closed
// result (a reply, or one classified error). Implementations: OpenAiEndpoint (HTTP, any
// OpenAI-compatible server), ReplayEndpoint (recorded transcripts), RecordingEndpoint (a
// wrapper that writes a transcript). Error rule: Complete() never throws; every expected
// failure is an Error in the Result.
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace kz::generate {

enum class Api { kChat, kCompletions };  // POST {base}/chat/completions or {base}/completions

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// Sampling parameters; an unset optional is not sent (the server's default applies).
struct Sampling {
  std::optional<double> temperature, top_p;
  std::optional<int> max_tokens;
  int n = 1;  // choices asked for
  std::optional<long long> seed;
  std::vector<std::string> stop;
};

struct Request {
  std::string id;  // names the request in logs and transcripts ("L1_19/3"); never sent
  Api api = Api::kChat;
  std::vector<Message> messages;  // kChat
  std::string prompt;             // kCompletions
  Sampling sampling;
  double deadline_s = 600;  // the whole request, retries and their waits included
};

struct Choice {
  std::string text;           // message.content (chat) or text (completions); raw bytes
  std::string finish_reason;  // "stop", "length", ... or "" when the server gave none
  long completion_tokens = 0;  // this choice's tokens (openai_wire.h: ChoiceTokens)
};

struct Usage {
  long prompt_tokens = 0;
  long completion_tokens = 0;         // the sum over choices (may exceed what the server said)
  long reasoning_tokens = 0;          // completion_tokens_details.reasoning_tokens, where reported
  long server_completion_tokens = 0;  // exactly what the server reported
  bool corrected = false;             // completion_tokens raised above the server's count
};

struct Reply {
  std::vector<Choice> choices;  // by the server's "index"; never empty
  Usage usage;
  std::string model;  // as the server names it; "" when absent
};

enum class ErrorKind {
  kConnect,      // refused, reset, cut mid-body, nothing received
  kDns,          // host name not resolved
  kTls,          // handshake or certificate failure
  kHttpStatus,   // a status other than 200 (http_status says which)
  kBadJson,      // a 200 whose body is not JSON
  kNoChoices,    // JSON without a usable "choices" array
  kTooLarge,     // the body passed the response-size cap
  kTimeout,      // the request's deadline passed
  kCancelled,    // the caller's cancel flag was set
  kNotRecorded,  // ReplayEndpoint: no transcript entry for this request
  kOther,        // any other transport failure
};

struct Error {
  ErrorKind kind = ErrorKind::kOther;
  int http_status = 0;  // kHttpStatus only
  std::string message;  // one line for humans
};

struct Result {
  std::variant<Reply, Error> outcome;
  double latency_s = 0;  // from the first attempt's start to the end of the last
  int attempts = 0;      // HTTP requests sent (retries counted); 0 for a replay miss

  bool ok() const { return std::holds_alternative<Reply>(outcome); }
  const Reply* reply() const { return std::get_if<Reply>(&outcome); }
  const Error* error() const { return std::get_if<Error>(&outcome); }
};

// "connect", "dns", "tls", "http_status", "bad_json", "no_choices", "too_large",
// "timeout", "cancelled", "not_recorded", "other".
const char* ErrorKindName(ErrorKind kind);
std::optional<ErrorKind> ParseErrorKind(const std::string& name);

// A Result as JSON and back (transcripts). FromJson: nullopt when `j` is not one.
nlohmann::json ResultToJson(const Result& r);
std::optional<Result> ResultFromJson(const nlohmann::json& j);

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // Sends one request and blocks until it has a result. Thread-safe: the generator calls
  // it from several threads at once. When `cancel` becomes true, returns kCancelled soon
  // (within ~100 ms).
  virtual Result Complete(const Request& request, const std::atomic<bool>& cancel) = 0;
  // For logs: "http://127.0.0.1:8080/v1 (model m)".
  virtual std::string Describe() const = 0;
};

}  // namespace kz::generate
