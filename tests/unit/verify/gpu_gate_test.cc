// The GPU gate (src/verify/gpu_gate.h): shared correctness, exclusive timing, writer
// preference, the memory budget, and children that die holding it.
#include <gtest/gtest.h>

#include "verify/gpu_gate.h"

namespace kz::verify {
namespace {

using Mode = GpuGate::Mode;
using V = std::vector<GpuGate::Holder>;
constexpr uint64_t GiB = 1ull << 30;

TEST(GpuGateTest, SharedHoldersRunTogetherUpToTheLimit) {
  GpuGate g(0, 3);
  EXPECT_EQ(g.Request(1, Mode::kShared, 0), V{1});
  EXPECT_EQ(g.Request(2, Mode::kShared, 0), V{2});
  EXPECT_EQ(g.Request(3, Mode::kShared, 0), V{3});
  EXPECT_EQ(g.Request(4, Mode::kShared, 0), V{}) << "a fourth waits for max_shared";
  EXPECT_EQ(g.Release(2), V{4});
  EXPECT_EQ(g.shared_holders(), 3);
}

TEST(GpuGateTest, TimingWaitsForTheStageBoundaryAndThenHasTheGpuAlone) {
  GpuGate g(0, 4);
  g.Request(1, Mode::kShared, 0);
  g.Request(2, Mode::kShared, 0);
  // 1 reaches its timing stage: its shared hold is released, but 2 is still mid-stage.
  EXPECT_EQ(g.Request(1, Mode::kExclusive, 0), V{});
  EXPECT_TRUE(g.Waiting(1));
  // Writer preference: a new correctness stage does not start while timing waits.
  EXPECT_EQ(g.Request(3, Mode::kShared, 0), V{});
  // 2 reaches its boundary: 1 times alone; 3 still waits.
  EXPECT_EQ(g.Release(2), V{1});
  EXPECT_TRUE(g.exclusive_held());
  EXPECT_EQ(g.shared_holders(), 0);
  EXPECT_TRUE(g.Waiting(3));
  EXPECT_EQ(g.Release(1), V{3});
}

TEST(GpuGateTest, TwoTimingRequestsAreServedInArrivalOrder) {
  GpuGate g(0, 4);
  g.Request(1, Mode::kShared, 0);
  g.Request(2, Mode::kShared, 0);
  EXPECT_EQ(g.Request(2, Mode::kExclusive, 0), V{});
  EXPECT_EQ(g.Request(1, Mode::kExclusive, 0), V{2}) << "1's shared released: 2 (first in line) times";
  EXPECT_EQ(g.Release(2), V{1});
  EXPECT_EQ(g.Release(1), V{});
  EXPECT_EQ(g.queued(), 0u);
}

TEST(GpuGateTest, MemoryBudgetBoundsSharedHoldersAndABigSampleRunsAlone) {
  GpuGate g(100 * GiB, 8);
  EXPECT_EQ(g.Request(1, Mode::kShared, 60 * GiB), V{1});
  EXPECT_EQ(g.Request(2, Mode::kShared, 50 * GiB), V{}) << "110 GiB > 100";
  EXPECT_EQ(g.Request(3, Mode::kShared, 10 * GiB), V{}) << "fits, but stays behind 2 (no starvation)";
  EXPECT_EQ(g.Release(1), (V{2, 3}));
  EXPECT_EQ(g.bytes_held(), 60 * GiB);
  g.Release(2);
  g.Release(3);
  EXPECT_EQ(g.Request(4, Mode::kShared, 300 * GiB), V{4}) << "larger than the budget: admitted alone";
  EXPECT_EQ(g.Request(5, Mode::kShared, 1), V{});
  EXPECT_EQ(g.Release(4), V{5});
}

TEST(GpuGateTest, AChildThatDiesReleasesWhatItHeldOrAskedFor) {
  GpuGate g(0, 2);
  g.Request(1, Mode::kExclusive, 0);
  EXPECT_EQ(g.Request(2, Mode::kShared, 0), V{});
  EXPECT_EQ(g.Request(3, Mode::kShared, 0), V{});
  EXPECT_EQ(g.Drop(2), V{}) << "a waiting child dies: nothing granted yet, 1 still times";
  EXPECT_EQ(g.Drop(1), V{3}) << "the timed child is killed at its limit: the next goes";
  EXPECT_FALSE(g.Holds(1));
  EXPECT_EQ(g.Drop(42), V{}) << "unknown holder: nothing";
}

TEST(GpuGateTest, AskingAgainReplacesTheHold) {
  GpuGate g(0, 2);
  g.Request(1, Mode::kShared, 5);
  EXPECT_EQ(g.Request(1, Mode::kShared, 7), V{1});
  EXPECT_EQ(g.shared_holders(), 1);
  EXPECT_EQ(g.bytes_held(), 7u);
}

}  // namespace
}  // namespace kz::verify
