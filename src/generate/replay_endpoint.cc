#include "generate/replay_endpoint.h"

#include <sstream>

#include "scoring/verdict_log.h"
#include "generate/openai_wire.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/log.h"

namespace kz::generate {
using nlohmann::json;

namespace {
constexpr const char* kFormat = "kz.transcript/1";

std::string Body(const Request& request, const std::string& model) {
  return RequestBody(request, model).dump(-1, ' ', false, json::error_handler_t::replace);
}
}  // namespace

std::string TranscriptKey(const Request& request, const std::string& model) {
  util::LabelledHasher h;
  h.Add("format", kFormat).Add("id", request.id).Add("api", ApiPath(request.api)).Add("body", Body(request, model));
  return h.HexDigest();
}

bool ReplayEndpoint::Load(const std::string& path, const std::string& model, std::string* err) {
  path_ = path;
  model_ = model;
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = json::parse(line, nullptr, false);
    bool ok = !j.is_discarded() && j.is_object() && j.value("format", "") == kFormat && j.contains("key") &&
              j["key"].is_string() && j.contains("result");
    auto r = ok ? ResultFromJson(j["result"]) : std::nullopt;
    if (!r) {
      ++bad_lines_;
      continue;
    }
    results_[j["key"].get<std::string>()] = std::move(*r);
  }
  return true;
}

Result ReplayEndpoint::Complete(const Request& request, const std::atomic<bool>&) {
  std::string key = TranscriptKey(request, model_);
  auto it = results_.find(key);
  if (it != results_.end()) return it->second;
  Result r;
  r.outcome = Error{ErrorKind::kNotRecorded, 0,
                    "request " + request.id + " (key " + key + ") is not in the transcript " + path_ +
                        " (another prompt, model or sampling setting than the recorded run?)"};
  return r;
}

std::string ReplayEndpoint::Describe() const { return "replay of " + path_ + " (model " + model_ + ")"; }

RecordingEndpoint::RecordingEndpoint(Endpoint* inner, std::string model) : inner_(inner), model_(std::move(model)) {}
RecordingEndpoint::~RecordingEndpoint() = default;

bool RecordingEndpoint::Open(const std::string& path, std::string* err) {
  util::MutexLock lock(mu_);
  log_ = std::make_unique<scoring::VerdictLog>();
  return log_->Open(path, err);
}

Result RecordingEndpoint::Complete(const Request& request, const std::atomic<bool>& cancel) {
  Result r = inner_->Complete(request, cancel);
  const Error* e = r.error();
  if (e && (e->kind == ErrorKind::kCancelled || e->kind == ErrorKind::kNotRecorded)) return r;
  json line = {{"format", kFormat}, {"key", TranscriptKey(request, model_)}, {"id", request.id},
               {"request", RequestBody(request, model_)}, {"result", ResultToJson(r)}};
  util::MutexLock lock(mu_);
  std::string err;
  if (!log_->Append(line, &err)) util::LogWarn("kz generate: cannot record " + request.id + ": " + err);
  return r;
}

}  // namespace kz::generate
