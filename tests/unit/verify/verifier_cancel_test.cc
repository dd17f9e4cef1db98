// Verifier::SetCancel: a cancelled verification kills its running child's process group
// (grandchildren included) promptly and runs no further sample.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fake_worker.h"
#include "util/fs.h"
#include "verify/verifier.h"

namespace kz::verify {
namespace {

// Running (a zombie not yet reaped by its new parent counts as dead).
bool Alive(pid_t pid) {
  std::string stat, err;
  if (::kill(pid, 0) != 0 || !util::ReadFile("/proc/" + std::to_string(pid) + "/stat", &stat, &err)) return false;
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

TEST(VerifierCancelTest, CancelKillsTheRunningGroupAndSkipsTheRest) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "cancel-", &err);
  ASSERT_FALSE(dir.empty()) << err;
  // The fake worker starts a grandchild, records both pids, and hangs.
  auto worker = testing_support::FakeWorker(
      "import subprocess, time\n"
      "p = subprocess.Popen(['sleep', '60'])\n"
      "open('" + dir + "/pids', 'w').write('%d %d' % (os.getpid(), p.pid))\n"
      "time.sleep(60)\n");
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/task.py", "class Model: pass\n", &err));
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/cand.py", "class ModelNew: pass\n", &err));
  VerifyOptions o;
  o.cpu_only = true;
  o.screen = false;
  o.cache_dir = dir + "/cache";
  o.timeout_s = 120;
  Verifier v(worker, o, {});
  std::atomic<bool> cancel{false};
  v.SetCancel([&] { return cancel.load(); });
  std::thread canceller([&] {
    std::string pids;
    for (int i = 0; i < 200 && !util::ReadFile(dir + "/pids", &pids, &err); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Sample> samples{{dir + "/task.py", dir + "/cand.py", "triton", std::nullopt, "first"},
                              {dir + "/task.py", dir + "/cand.py", "triton", std::nullopt, "second"}};
  auto verdicts = v.VerifyAll(samples);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  canceller.join();
  ASSERT_EQ(verdicts.size(), 2u);
  EXPECT_LT(s, 15.0) << "the cancel did not stop the hanging child";
  EXPECT_NE(verdicts[0].value("status", ""), "correct");
  EXPECT_EQ(verdicts[1].value("reason", ""), "verification cancelled") << verdicts[1].dump();
  std::string pids;
  ASSERT_TRUE(util::ReadFile(dir + "/pids", &pids, &err)) << err;
  pid_t child = 0, grandchild = 0;
  ASSERT_EQ(std::sscanf(pids.c_str(), "%d %d", &child, &grandchild), 2);
  for (int i = 0; i < 50 && Alive(grandchild); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(Alive(child));
  EXPECT_FALSE(Alive(grandchild)) << "the grandchild survived: the group was not killed";
  util::RemoveAll(dir);
}

TEST(VerifierCancelTest, NoCancelCallbackMeansNoPolling) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "nocancel-", &err);
  auto worker = testing_support::FakeWorker("send({'ok': True, 'result': {}})\n");
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/task.py", "class Model: pass\n", &err));
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/cand.py", "class ModelNew: pass\n", &err));
  VerifyOptions o;
  o.cpu_only = true;
  o.screen = false;
  o.cache_dir = dir + "/cache";
  Verifier v(worker, o, {});
  auto verdicts = v.VerifyAll({{dir + "/task.py", dir + "/cand.py", "triton", std::nullopt, "x"}});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_NE(verdicts[0].value("reason", ""), "verification cancelled");
  util::RemoveAll(dir);
}

}  // namespace
}  // namespace kz::verify
