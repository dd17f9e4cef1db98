// The worker client against a stand-in worker: a real python3 process speaking the protocol.
#include "worker/worker_client.h"

#include <gtest/gtest.h>

#include "fake_worker.h"

namespace kz::worker {
using testing_support::FakeWorker;

TEST(WorkerClient, EventsAndResultAreParsed) {
  auto cfg = FakeWorker(
      "print('noise on stdout')\n"
      "send({'type': 'event', 'stage': 'load', 'data': {'op': req['op'], 'p': req['protocol']}})\n"
      "send({'type': 'result', 'status': 'correct'})\n");
  auto r = RunWorker(cfg, {{{"op", "run"}}, {}, 30, 0});
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
  auto r = RunWorker(cfg, {{{"op", "run"}}, {}, 30, 0});
  EXPECT_FALSE(r.result);
  EXPECT_FALSE(r.protocol_error.empty());
}

TEST(WorkerClient, HangingWorkerTimesOut) {
  auto cfg = FakeWorker("import time\ntime.sleep(60)\n");
  auto r = RunWorker(cfg, {{{"op", "run"}}, {}, 0.5, 0});
  EXPECT_EQ(r.process.end, util::ProcessEnd::kTimedOut);
  EXPECT_NE(DescribeEnd(r.process).find("wall-time limit"), std::string::npos);
}

}  // namespace kz::worker
