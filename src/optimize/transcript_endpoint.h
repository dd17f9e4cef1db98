// The endpoint of a `kz optimize` run: the run's transcript first (a request already answered
// — the iteration a kill interrupted — is answered again from it, never paid twice), then
// the live model, whose every answer is appended to the transcript.
#pragma once
#include <memory>
#include <string>

#include "generate/replay_endpoint.h"

namespace kz::optimize {

class TranscriptEndpoint : public generate::Endpoint {
 public:
  // `live` (not owned; may be null: then a request missing from the transcript is kNotRecorded).
  TranscriptEndpoint(generate::Endpoint* live, std::string model) : live_(live), model_(std::move(model)) {}
  bool Open(const std::string& transcript_path, std::string* err);
  generate::Result Complete(const generate::Request& request, const std::atomic<bool>& cancel) override;
  std::string Describe() const override;

 private:
  generate::Endpoint* live_;
  std::string model_;
  generate::ReplayEndpoint recorded_;
  std::unique_ptr<generate::RecordingEndpoint> recording_;
};

}  // namespace kz::optimize
