// GateHub's enforcement (src/verify/gate_hub.h): while one holder times, the other holders'
// process groups that ran before are stopped, and continued when the timing ends; the next
// timed holder is never left stopped. Real processes, their state read from /proc.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "verify/gate_hub.h"

namespace kz::verify {
namespace {

pid_t Sleeper() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    for (;;) ::pause();
  }
  ::setpgid(pid, pid);
  return pid;
}

// 'T' (stopped) or 'S' (sleeping), waiting up to 2 s for the signal to take effect.
char StateSettlingOn(pid_t pid, char want) {
  char state = '?';
  for (int i = 0; i < 200; ++i) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(f, line);
    auto close = line.rfind(')');
    state = close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
    if (state == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return state;
}

class GateHubTest : public ::testing::Test {
 protected:
  void SetUp() override { a_ = Sleeper(), b_ = Sleeper(); }
  void TearDown() override {
    for (pid_t p : {a_, b_}) {
      ::kill(-p, SIGKILL);
      ::waitpid(p, nullptr, 0);
    }
  }
  pid_t a_ = -1, b_ = -1;
};

TEST_F(GateHubTest, OthersAreStoppedWhileOneIsTimedAndContinuedAfter) {
  GateHub hub(0, 4);
  auto h1 = hub.NewHolder(), h2 = hub.NewHolder();
  hub.Register(h1, a_);
  hub.Register(h2, b_);
  ASSERT_TRUE(hub.Handle(h1, "shared", 0));
  ASSERT_TRUE(hub.Handle(h2, "shared", 0));
  EXPECT_TRUE(hub.TakeGrant(h1));
  EXPECT_TRUE(hub.TakeGrant(h2));
  hub.Handle(h1, "exclusive", 0);
  EXPECT_FALSE(hub.TakeGrant(h1)) << "2 is mid-stage";
  hub.Handle(h2, "exclusive", 0);  // 2 reaches its timing too: 1 (first in line) times
  EXPECT_TRUE(hub.TakeGrant(h1));
  EXPECT_TRUE(hub.Stopped(h2));
  EXPECT_EQ(StateSettlingOn(b_, 'T'), 'T');
  EXPECT_EQ(StateSettlingOn(a_, 'S'), 'S') << "the timed one runs";
  hub.Handle(h1, "release", 0);  // 1 done: 2 times now, and must not stay stopped
  EXPECT_TRUE(hub.TakeGrant(h2));
  EXPECT_FALSE(hub.Stopped(h2));
  EXPECT_EQ(StateSettlingOn(b_, 'S'), 'S');
  EXPECT_TRUE(hub.Stopped(h1)) << "1 ran candidate code: stopped while 2 is timed";
  EXPECT_EQ(StateSettlingOn(a_, 'T'), 'T');
  hub.Handle(h2, "release", 0);
  EXPECT_FALSE(hub.Stopped(h1));
  EXPECT_EQ(StateSettlingOn(a_, 'S'), 'S');
}

TEST_F(GateHubTest, AHolderThatNeverRanIsNotStoppedAndADroppedTimerContinuesTheOthers) {
  GateHub hub(0, 4);
  auto h1 = hub.NewHolder(), h2 = hub.NewHolder();
  hub.Register(h1, a_);
  hub.Register(h2, b_);  // 2 is still starting: it has asked for nothing
  hub.Handle(h1, "exclusive", 0);
  EXPECT_TRUE(hub.TakeGrant(h1));
  EXPECT_FALSE(hub.Stopped(h2)) << "no candidate code loaded yet";
  hub.Handle(h2, "shared", 0);  // waits behind the timing
  EXPECT_FALSE(hub.TakeGrant(h2));
  hub.Drop(h1);  // the timed child is killed at its limit
  EXPECT_TRUE(hub.TakeGrant(h2));
  EXPECT_EQ(StateSettlingOn(b_, 'S'), 'S');
}

// Held (what WaitRunChild keeps off a child's wall limit): a request not granted yet, a grant
// not yet taken by the child's thread, a stop for another's timing; Stats for /metrics.
TEST_F(GateHubTest, HeldCoversWaitingAndStoppedAndStatsCountTheTimings) {
  GateHub hub(0, 1);
  auto h1 = hub.NewHolder(), h2 = hub.NewHolder();
  hub.Register(h1, a_);
  hub.Register(h2, b_);
  EXPECT_FALSE(hub.Held(h1)) << "asked for nothing";
  hub.Handle(h1, "shared", 0);
  EXPECT_TRUE(hub.Held(h1)) << "granted, not yet told";
  EXPECT_TRUE(hub.TakeGrant(h1));
  EXPECT_FALSE(hub.Held(h1));
  hub.Handle(h2, "shared", 0);
  EXPECT_TRUE(hub.Held(h2)) << "max_shared 1: waits for 1";
  EXPECT_EQ(hub.stats().queued, 1u);
  hub.Handle(h1, "exclusive", 0);  // 1 releases its shared hold: 2 is first in line
  EXPECT_TRUE(hub.TakeGrant(h2));
  hub.Handle(h2, "exclusive", 0);  // 1 (earlier) times; 2 ran code: stopped
  EXPECT_TRUE(hub.TakeGrant(h1));
  EXPECT_TRUE(hub.Held(h2)) << "stopped and waiting";
  auto st = hub.stats();
  EXPECT_TRUE(st.exclusive);
  EXPECT_EQ(st.exclusive_grants, 1u);
  hub.Handle(h1, "release", 0);
  EXPECT_TRUE(hub.TakeGrant(h2));
  EXPECT_EQ(hub.stats().exclusive_grants, 2u);
  hub.AddWait(1.5);
  hub.AddWait(0.5);
  EXPECT_DOUBLE_EQ(hub.stats().held_s, 2.0);
  hub.Handle(h2, "release", 0);
  st = hub.stats();
  EXPECT_FALSE(st.exclusive);
  EXPECT_EQ(st.shared, 0);
  EXPECT_EQ(st.max_shared_seen, 1);
}

}  // namespace
}  // namespace kz::verify
