#include "optimize/transcript_endpoint.h"

#include "util/fs.h"

namespace kz::optimize {

bool TranscriptEndpoint::Open(const std::string& path, std::string* err) {
  if (util::PathExists(path) && !recorded_.Load(path, model_, err)) return false;
  if (!live_) return true;
  recording_ = std::make_unique<generate::RecordingEndpoint>(live_, model_);
  return recording_->Open(path, err);
}

generate::Result TranscriptEndpoint::Complete(const generate::Request& request, const std::atomic<bool>& cancel) {
  generate::Result r = recorded_.Complete(request, cancel);
  if (r.ok() || !recording_ || r.error()->kind != generate::ErrorKind::kNotRecorded) return r;
  return recording_->Complete(request, cancel);
}

std::string TranscriptEndpoint::Describe() const {
  return live_ ? live_->Describe() + " (transcript first)" : "the transcript only";
}

}  // namespace kz::optimize
