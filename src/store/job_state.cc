#include "store/job_state.h"

namespace kz::store {

std::string ToString(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "unknown";  // not reached: the switch names every state
}

std::optional<JobState> ParseJobState(std::string_view text) {
  for (JobState s : kAllJobStates)
    if (ToString(s) == text) return s;
  return std::nullopt;
}

}  // namespace kz::store
