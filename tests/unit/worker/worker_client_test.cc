// The worker client against a stand-in worker: a real python3 process speaking the protocol.
#include "worker/worker_client.h"

#include <gtest/gtest.h>

#include "fake_worker.h"

namespace kz::worker {
using testing_support::FakeWorker;
namespace {
WorkerCall Call(double wall_s) {
  WorkerCall c;
  c.request = {{"op", "run"}};
  c.wall_limit_s = wall_s;
  return c;
}
}  // namespace

TEST(WorkerClient, EventsAndResultAreParsed) {
  auto cfg = FakeWorker(
      "print('noise on stdout')\n"
      "send({'type': 'event', 'stage': 'load', 'data': {'op': req['op'], 'p': req['protocol']}})\n"
      "send({'type': 'result', 'status': 'correct'})\n");
  auto r = RunWorker(cfg, Call(30));
  ASSERT_TRUE(r.result) << r.process.stderr_tail;
  EXPECT_EQ((*r.result)["status"], "correct");
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0]["data"]["op"], "run");
  EXPECT_EQ(r.events[0]["data"]["p"], kProtocolVersion);
  EXPECT_EQ(r.process.stdout_tail, "noise on stdout\n");
  EXPECT_TRUE(r.protocol_error.empty());
}

TEST(WorkerClient, GarbageOnTheChannelIsAProtocolError) {
  auto cfg = FakeWorker("os.write(fd, b'\\x00\\x00\\x00\\x03abc')\n");
  auto r = RunWorker(cfg, Call(30));
  EXPECT_FALSE(r.result);
  EXPECT_FALSE(r.protocol_error.empty());
}

TEST(WorkerClient, FramesWithoutTheSessionTokenAreDropped) {
  // Candidate code writing its own "correct" result straight to the channel.
  auto cfg = FakeWorker(
      "b = json.dumps({'type': 'result', 'status': 'correct', 'token': 'guess'}).encode()\n"
      "os.write(fd, struct.pack('>I', len(b)) + b)\n");
  auto r = RunWorker(cfg, Call(30));
  EXPECT_FALSE(r.result) << "a forged result must not be accepted";
  EXPECT_NE(r.protocol_error.find("session token"), std::string::npos);
}

TEST(WorkerClient, EachCallHasItsOwnToken) {
  EXPECT_NE(Call(1).token, Call(1).token);
  EXPECT_EQ(Call(1).token.size(), 32u);
}

TEST(WorkerClient, HangingWorkerTimesOut) {
  auto cfg = FakeWorker("import time\ntime.sleep(60)\n");
  auto r = RunWorker(cfg, Call(0.5));
  EXPECT_EQ(r.process.end, util::ProcessEnd::kTimedOut);
  EXPECT_NE(DescribeEnd(r.process).find("wall-time limit"), std::string::npos);
}

}  // namespace kz::worker
