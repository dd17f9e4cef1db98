#include "verify/status.h"

#include <gtest/gtest.h>

#include <set>

namespace kz::verify {

TEST(Status, NamesRoundTripAndExitCodesAreDistinct) {
  std::set<int> codes;
  for (auto s : {Status::kCorrect, Status::kIncorrect, Status::kCompileError, Status::kRuntimeError,
                 Status::kTimeout, Status::kRejected, Status::kInvalidTask, Status::kNotRun}) {
    EXPECT_EQ(ParseStatus(StatusName(s)), s);
    codes.insert(ExitCode(s));
  }
  EXPECT_EQ(codes.size(), 8u);
  EXPECT_EQ(codes.count(kExitUsage), 0u);
  EXPECT_EQ(codes.count(kExitInternal), 0u);
  EXPECT_EQ(ExitCode(Status::kCorrect), 0);
  EXPECT_FALSE(ParseStatus("bogus"));
}

}  // namespace kz::verify
