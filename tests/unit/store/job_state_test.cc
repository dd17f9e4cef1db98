#include "store/job_state.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kz::store {
namespace {

TEST(JobStateNames, AreTheStoredSpellings) {
  // The SQLite column and the API's JSON: stored databases and clients rely on these.
  EXPECT_EQ(ToString(JobState::kQueued), "queued");
  EXPECT_EQ(ToString(JobState::kRunning), "running");
  EXPECT_EQ(ToString(JobState::kDone), "done");
  EXPECT_EQ(ToString(JobState::kFailed), "failed");
  EXPECT_EQ(ToString(JobState::kCancelled), "cancelled");
}

TEST(JobStateNames, RoundTrip) {
  for (JobState s : kAllJobStates) EXPECT_EQ(ParseJobState(ToString(s)), s) << ToString(s);
}

TEST(JobStateNames, AnyOtherSpellingIsRefused) {
  for (const char* bad : {"", "Queued", "DONE", "done ", " running", "canceled", "paused", "0", "4", "done\n"})
    EXPECT_FALSE(ParseJobState(bad)) << '"' << bad << '"';
  EXPECT_FALSE(ParseJobState(std::string_view("done\0x", 6))) << "an embedded NUL";
}

TEST(JobStateNames, JsonHoldsTheSpellingNotTheNumber) {
  EXPECT_EQ(nlohmann::json(JobState::kCancelled), "cancelled");
  nlohmann::json object = {{"state", JobState::kDone}};
  EXPECT_EQ(object.dump(), R"({"state":"done"})");
}

}  // namespace
}  // namespace kz::store
