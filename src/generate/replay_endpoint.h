// Transcripts: a JSONL file, one request and its result a line —
//   {"format": "kz.transcript/1", "key": K, "id": "L1_19/0", "request": BODY, "result": R}
// K = TranscriptKey(request, model), R = ResultToJson. RecordingEndpoint appends one line
// per finished request (fsync'd; cancelled requests are not recorded); ReplayEndpoint
// answers from such a file, so a rerun or a test needs no model.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "generate/endpoint.h"
#include "util/thread_annotations.h"

namespace kz::scoring { class VerdictLog; }

namespace kz::generate {

// XXH3-128 over labelled fields: the transcript format, the request id, the API and the
// request body as sent (which holds the model and every sampling field). The id is in
// the key because two samples of one task can send identical bodies (no seed).
std::string TranscriptKey(const Request& request, const std::string& model);

class ReplayEndpoint : public Endpoint {
 public:
  // Loads `path`; false with *err when it cannot be read. Unparsable lines are counted
  // (bad_lines) and skipped; a later line with the same key wins.
  bool Load(const std::string& path, const std::string& model, std::string* err);
  int bad_lines() const { return bad_lines_; }
  size_t size() const { return results_.size(); }

  // The recorded result, or kNotRecorded naming the request id and key. Thread-safe.
  Result Complete(const Request& request, const std::atomic<bool>& cancel) override;
  std::string Describe() const override;

 private:
  std::string path_, model_;
  std::map<std::string, Result> results_;  // by key; read-only after Load
  int bad_lines_ = 0;
};

class RecordingEndpoint : public Endpoint {
 public:
  // Wraps `inner` (not owned; outlives this) and appends to `path`.
  RecordingEndpoint(Endpoint* inner, std::string model);
  ~RecordingEndpoint() override;
  bool Open(const std::string& path, std::string* err);

  Result Complete(const Request& request, const std::atomic<bool>& cancel) override;
  std::string Describe() const override { return inner_->Describe() + ", recording"; }

 private:
  Endpoint* inner_;
  std::string model_;
  util::Mutex mu_;
  std::unique_ptr<scoring::VerdictLog> log_ GUARDED_BY(mu_);
};

}  // namespace kz::generate
