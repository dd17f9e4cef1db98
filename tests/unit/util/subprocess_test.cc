// Integration tests of the process set against real child processes (/bin/sh).
#include "util/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "util/frame.h"

namespace kz::util {
namespace {
ProcessSpec Sh(const std::string& script) {
  ProcessSpec s;
  s.argv = {"/bin/sh", "-c", script};
  return s;
}
}  // namespace

TEST(Subprocess, ExitCodeAndOutput) {
  auto r = RunProcess(Sh("echo out; echo err >&2; exit 7"));
  EXPECT_EQ(r.end, ProcessEnd::kExited);
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.stdout_tail, "out\n");
  EXPECT_EQ(r.stderr_tail, "err\n");
}

TEST(Subprocess, SignalIsReported) {
  auto r = RunProcess(Sh("kill -SEGV $$"));
  EXPECT_EQ(r.end, ProcessEnd::kSignaled);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(SignalName(r.signal), "SIGSEGV");
}

TEST(Subprocess, DeadlineKillsTheWholeGroup) {
  auto spec = Sh("sleep 30 & sleep 30; echo never");
  spec.wall_limit_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunProcess(spec);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.end, ProcessEnd::kTimedOut);
  EXPECT_LT(s, 3.0) << "the background sleep kept a pipe open: the group was not killed";
  EXPECT_EQ(r.stdout_tail, "");
}

// Time a child waits on something outside its control (the GPU gate) is added to its limit.
TEST(Subprocess, ExtendedWallLimitLetsTheChildFinish) {
  ProcessSet set;
  auto spec = Sh("sleep 1.5; echo done");
  spec.wall_limit_s = 1.0;
  auto id = set.Start(std::move(spec));
  ASSERT_TRUE(set.ExtendWallLimit(id, 2.0));
  std::vector<std::pair<ProcessSet::Id, ProcessResult>> done;
  while (done.empty()) done = set.WaitAny();
  EXPECT_EQ(done[0].second.end, ProcessEnd::kExited);
  EXPECT_EQ(done[0].second.stdout_tail, "done\n");
  EXPECT_FALSE(set.ExtendWallLimit(id, 1.0)) << "reaped";
  EXPECT_FALSE(set.ExtendWallLimit(999, 1.0)) << "unknown";
  auto unlimited = set.Start(Sh("exit 0"));
  EXPECT_FALSE(set.ExtendWallLimit(unlimited, 1.0)) << "no wall limit to extend";
}

TEST(Subprocess, HugeOutputKeepsOnlyATail) {
  auto spec = Sh("head -c 20000000 /dev/zero | tr '\\0' 'x'; echo END");
  spec.tail_bytes = 100;
  auto r = RunProcess(spec);
  EXPECT_EQ(r.end, ProcessEnd::kExited);
  EXPECT_EQ(r.stdout_bytes, 20000004u);
  EXPECT_EQ(r.stdout_tail.size(), 100u);
  EXPECT_EQ(r.stdout_tail.substr(96), "END\n");
}

TEST(Subprocess, ChannelCarriesFramesBothWays) {
  // The child echoes the request frame back on fd 3 (the protocol channel).
  auto spec = Sh("test \"$KZ_PROTOCOL_FD\" = 3 && head -c 9 <&3 >&3");
  spec.channel = true;
  spec.channel_input = EncodeFrame("hello");
  auto r = RunProcess(spec);
  EXPECT_EQ(r.end, ProcessEnd::kExited);
  EXPECT_EQ(r.exit_code, 0) << r.stderr_tail;
  FrameDecoder d;
  d.Feed(r.channel_data.data(), r.channel_data.size());
  std::string p;
  ASSERT_TRUE(d.Pop(&p));
  EXPECT_EQ(p, "hello");
}

TEST(Subprocess, MemoryLimitKillsTheGroup) {
  // A child that grows past 64 MiB resident.
  auto spec = Sh("python3 -c 'import time; b = bytearray(400 << 20); time.sleep(20)'");
  spec.max_rss_bytes = 64ull << 20;
  spec.wall_limit_s = 15;
  auto r = RunProcess(spec);
  EXPECT_EQ(r.end, ProcessEnd::kMemoryExceeded);
  EXPECT_GT(r.peak_rss_bytes, 64ull << 20);
}

TEST(Subprocess, MissingProgramFailsCleanly) {
  ProcessSpec s;
  s.argv = {"/nonexistent/program"};
  auto r = RunProcess(s);
  EXPECT_EQ(r.end, ProcessEnd::kExited);
  EXPECT_EQ(r.exit_code, 127);
}

TEST(Subprocess, SetRunsChildrenConcurrently) {
  ProcessSet set;
  for (int i = 0; i < 4; ++i) set.Start(Sh("sleep 0.5"));
  auto t0 = std::chrono::steady_clock::now();
  size_t done = 0;
  while (set.running() > 0) done += set.WaitAny().size();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(done, 4u);
  EXPECT_LT(s, 1.5);
}

TEST(Subprocess, EnvironmentIsSetAndUnset) {
  auto spec = Sh("echo \"$KZ_A-${HOME:-nohome}\"");
  spec.env = {{"KZ_A", "1"}};
  spec.unset_env = {"HOME"};
  EXPECT_EQ(RunProcess(spec).stdout_tail, "1-nohome\n");
}

}  // namespace kz::util

namespace kz::util {
// A held child gets neither its channel input nor a wall limit until Release; then its
// clock starts: parked longer than its limit, it is not killed, and wall_s counts from
// the release.
TEST(Subprocess, HeldChildWaitsForItsRelease) {
  ProcessSpec spec = Sh("head -c 5 <&3 >&2");
  spec.channel = true;
  spec.hold = true;
  spec.wall_limit_s = 0.3;
  ProcessSet set;
  auto id = set.Start(std::move(spec));
  EXPECT_TRUE(set.WaitAny(800).empty());  // parked past its limit: still alive
  ASSERT_TRUE(set.Release(id, "hello", 5));
  EXPECT_FALSE(set.Release(id, "again", 5));  // released already
  auto done = set.WaitAny(5000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].second.end, ProcessEnd::kExited);
  EXPECT_EQ(done[0].second.stderr_tail, "hello");
  EXPECT_LT(done[0].second.wall_s, 0.7);
}

TEST(Subprocess, ReleaseOfAnExitedChildFails) {
  ProcessSpec spec = Sh("exit 3");
  spec.channel = true;
  spec.hold = true;
  ProcessSet set;
  auto id = set.Start(std::move(spec));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(set.Release(id, "x", 5));
  EXPECT_FALSE(set.Release(id + 100, "x", 5));  // unknown id
}

TEST(Subprocess, HeldChildStillHasItsMemoryLimitAndDiesWithTheSet) {
  ProcessSpec spec = Sh("sleep 30");
  spec.channel = true;
  spec.hold = true;
  auto t0 = std::chrono::steady_clock::now();
  {
    ProcessSet set;
    set.Start(std::move(spec));
  }  // the destructor kills the parked group
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);
}
}  // namespace kz::util

namespace kz::util {
TEST(Subprocess, NiceIsAddedToTheChild) {
  ProcessSpec spec = Sh("cut -d' ' -f19 /proc/self/stat");
  spec.nice = 7;
  auto r = RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_tail;
  EXPECT_GE(std::stoi(r.stdout_tail), 7);  // field 19: nice (cut's own, inherited from sh)
}
}  // namespace kz::util

namespace kz::util {
TEST(Subprocess, IdleClassIsInheritedByTheChildsChildren) {
  ProcessSpec spec = Sh("cut -d' ' -f41 /proc/self/stat");
  spec.idle_class = true;
  auto r = RunProcess(spec);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_tail;
  EXPECT_EQ(std::stoi(r.stdout_tail), 5);  // field 41: policy, 5 = SCHED_IDLE (cut's own, from sh)
  spec.idle_class = false;
  r = RunProcess(spec);
  EXPECT_EQ(std::stoi(r.stdout_tail), 0);  // SCHED_OTHER
}
}  // namespace kz::util

namespace kz::util {
// A long-lived child whose stdin and stdout are the channel: two round trips while it
// runs (cat echoes), then Expire() ends it as timed out.
TEST(Subprocess, StdioChannelStreamsWhileTheChildRuns) {
  ProcessSpec spec = {};
  spec.argv = {"/bin/sh", "-c", "test -z \"$KZ_PROTOCOL_FD\" && echo ready >&2 && exec cat"};
  spec.channel = spec.stdio_channel = spec.stream_channel = true;
  ProcessSet set;
  auto id = set.Start(spec);
  for (std::string msg : {"first", "second"}) {
    ASSERT_TRUE(set.Send(id, msg));
    std::string got;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (got.size() < msg.size() && std::chrono::steady_clock::now() < until) {
      auto done = set.WaitAny(5000);
      ASSERT_TRUE(done.empty()) << "cat ended early";
      got += set.TakeChannel(id);
    }
    EXPECT_EQ(got, msg);
  }
  ASSERT_TRUE(set.Expire(id));
  auto done = set.WaitAny(5000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].second.end, ProcessEnd::kTimedOut);
  EXPECT_EQ(done[0].second.stderr_tail, "ready\n");
  EXPECT_FALSE(set.Send(id, "late")) << "a finished child takes no input";
  EXPECT_FALSE(set.Expire(id));
}
}  // namespace kz::util
