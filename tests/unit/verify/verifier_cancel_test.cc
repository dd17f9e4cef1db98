// Verifier::SetCancel: a cancelled verification kills its running child and runs no further
// sample. The logic against the scripted worker; the real child process once, to prove that
// the kill takes its whole process group (grandchildren included).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fake_worker.h"
#include "pid_wait.h"
#include "scripted_worker.h"
#include "util/fs.h"
#include "verify/cpu_sample.h"
#include "verify/verifier.h"

namespace kz::verify {
namespace {
using testing_support::Script;
using testing_support::ScriptedLauncher;

TEST(VerifierCancelTest, CancelKillsTheRunningCallAndSkipsTheRest) {
  CpuSample s("cancel-");
  auto launcher = std::make_shared<ScriptedLauncher>([](const worker::WorkerCall&) { return Script().Hang(); });
  Verifier v(testing_support::ScriptedWorkerConfig(), s.options, {}, launcher);
  std::atomic<bool> cancel{false};
  v.SetCancel([&] { return cancel.load(); });
  std::thread canceller([&] {
    EXPECT_TRUE(launcher->WaitPlaying("run", 1, std::chrono::seconds(30)));
    cancel = true;
  });
  auto verdicts = v.VerifyAll({s.Named("first"), s.Named("second")});
  canceller.join();
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_NE(verdicts[0].value("status", ""), "correct") << verdicts[0].dump();
  EXPECT_EQ(verdicts[1].value("reason", ""), "verification cancelled") << verdicts[1].dump();
  // The first sample's run child (prestarted, then released with the sample) and the second's,
  // started ahead and never released: both killed, the second sample never ran.
  auto calls = launcher->Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].Op(), "run");
  EXPECT_EQ(calls[1].Op(), "") << "the second sample never ran";
  for (const auto& c : calls) EXPECT_TRUE(c.killed);
  EXPECT_EQ(launcher->Alive(), 0u);
}

TEST(VerifierCancelTest, NoCancelCallbackMeansNoPolling) {
  CpuSample s("nocancel-");
  auto launcher = std::make_shared<ScriptedLauncher>([](const worker::WorkerCall&) {
    return Script().Result({{"status", "correct"}, {"reason", "fake"}});
  });
  Verifier v(testing_support::ScriptedWorkerConfig(), s.options, {}, launcher);
  auto verdicts = v.VerifyAll({s.Named("x")});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_NE(verdicts[0].value("reason", ""), "verification cancelled");
  EXPECT_FALSE(launcher->Calls().at(0).killed);
}

// The real child process: the worker starts a grandchild, records both pids and hangs; the
// cancel (as soon as the pids are written) kills both.
TEST(VerifierCancelTest, CancelKillsTheRealChildsWholeGroup) {
  CpuSample s("cancel-real-");
  auto worker = testing_support::FakeWorker(
      "import subprocess, time\n"
      "p = subprocess.Popen(['sleep', '60'])\n"
      "open('" +
      s.dir +
      "/pids.tmp', 'w').write('%d %d' % (os.getpid(), p.pid))\n"
      "os.rename('" +
      s.dir + "/pids.tmp', '" + s.dir +
      "/pids')\n"
      "time.sleep(60)\n");
  Verifier v(worker, s.options, {});
  v.SetCancel([&] { return util::PathExists(s.dir + "/pids"); });  // polled every kCancelPollMs
  auto t0 = std::chrono::steady_clock::now();
  auto verdicts = v.VerifyAll({s.Named("first"), s.Named("second")});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_LT(took, 15.0) << "the cancel did not stop the hanging child";
  EXPECT_EQ(verdicts[1].value("reason", ""), "verification cancelled") << verdicts[1].dump();
  std::string pids, err;
  ASSERT_TRUE(util::ReadFile(s.dir + "/pids", &pids, &err)) << err;
  pid_t child = 0, grandchild = 0;
  ASSERT_EQ(std::sscanf(pids.c_str(), "%d %d", &child, &grandchild), 2);
  EXPECT_TRUE(testing_support::ProcessEnds(child, 5000));
  EXPECT_TRUE(testing_support::ProcessEnds(grandchild, 5000)) << "the grandchild survived: the group was not killed";
}

}  // namespace
}  // namespace kz::verify
