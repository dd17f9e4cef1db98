// A stored job's state, and its one spelling at the boundaries (the SQLite `state` column,
// the HTTP API's JSON). The spellings are a wire format: stored databases and clients rely
// on them, so they never change.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kz::store {

// queued -> running -> done (or failed: kz itself broke); a queued or running job may
// become cancelled instead. done, failed and cancelled are final.
enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled };

inline constexpr std::array<JobState, 5> kAllJobStates = {JobState::kQueued, JobState::kRunning, JobState::kDone,
                                                          JobState::kFailed, JobState::kCancelled};

// "queued", "running", "done", "failed", "cancelled".
std::string ToString(JobState state);
// The state spelled `text`; nullopt for anything else (the caller reports it as an error).
std::optional<JobState> ParseJobState(std::string_view text);

// nlohmann::json's hook (found by argument-dependent lookup; no JSON include here): a
// JobState in a JSON value is its spelling, never the enum's number.
template <class Json>
void to_json(Json& j, JobState state) {
  j = ToString(state);
}

}  // namespace kz::store
