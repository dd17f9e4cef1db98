// Issue 7 on the CPU: kz serve's scheduler on an 8-GPU host keeps every GPU busy, one job
// at a time per GPU, each job's child pinned to its slot's GPU. The GPUs are listed, not
// touched: the fake worker stands in for kz_worker (it sleeps like a GPU-bound sample,
// reports the CUDA_VISIBLE_DEVICES it saw and writes its start and end times).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_worker.h"
#include "service/scheduler.h"
#include "store/job_store.h"
#include "util/fs.h"

namespace kz::service {
namespace {

constexpr int kGpus = 8;
constexpr int kJobs = 16;        // 2 per GPU
constexpr double kRunS = 3.0;    // one sample's run (all 8 must start within it)

TEST(SchedulerSlotsTest, EightGpuSlotsRunAtOnceEachChildPinnedToItsSlot) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "slots-", &err);
  ASSERT_FALSE(dir.empty()) << err;
  auto store = store::JobStore::Open(dir + "/jobs.db", &err);
  ASSERT_TRUE(store) << err;
  Scheduler::Config c;
  c.worker = testing_support::FakeWorker(
      "import time\n"
      "t0 = time.time()\n"
      "time.sleep(" + std::to_string(kRunS) + ")\n"
      "open('" + dir + "/run-%d' % os.getpid(), 'w').write('%f %f' % (t0, time.time()))\n"
      "send({'type': 'result', 'status': 'correct', 'reason': 'fake', 'stages': {}, 'error': None,\n"
      "      'device': {'kind': 'cuda', 'index': 0, 'visible': os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')}})\n");
  c.base.screen = false;
  c.base.cache_dir = dir + "/cache";
  c.base.timeout_s = 60;
  for (int k = 0; k < kGpus; ++k) c.gpus.push_back(verify::Gpu{k, "NVIDIA H200", "9.0"});
  c.build_threads = 2;
  c.work_dir = dir + "/work";
  Scheduler s(store.get(), c);
  ASSERT_EQ(s.Slots(), static_cast<size_t>(kGpus));
  ASSERT_TRUE(s.Start(&err)) << err;

  std::vector<Scheduler::Submission> batch(kJobs);
  for (int i = 0; i < kJobs; ++i) {
    batch[i].request.task = "class Model: pass\n";
    batch[i].request.candidate = "class ModelNew: pass\n# " + std::to_string(i) + "\n";
    batch[i].request.backend = "triton";
  }
  auto t0 = std::chrono::steady_clock::now();
  auto r = s.SubmitBatch(batch);
  ASSERT_EQ(r.kind, Scheduler::SubmitKind::kQueued) << r.error;
  std::map<int, int> jobs_per_gpu;
  for (const auto& item : r.items) {
    auto job = s.Wait(item.id, std::chrono::seconds(120), &err);
    ASSERT_TRUE(job && job->state == store::kDone && job->verdict_json) << err;
    auto v = nlohmann::json::parse(*job->verdict_json);
    int index = v["device"].value("index", -1);
    EXPECT_EQ(v["device"].value("visible", ""), std::to_string(index)) << "the child saw another GPU: " << v.dump();
    ++jobs_per_gpu[index];
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.Stop();

  EXPECT_EQ(jobs_per_gpu.size(), static_cast<size_t>(kGpus)) << "every GPU slot ran jobs";
  for (const auto& [gpu, n] : jobs_per_gpu) EXPECT_GE(n, 1) << "cuda:" << gpu;
  // Serial would be kJobs x kRunS = 48 s; 8 at once ~6 s plus the children's starts.
  EXPECT_LT(wall, kJobs * kRunS / 3) << "the slots did not run at once";
  // The most runs overlapping at one instant: every slot, never more than one job per GPU.
  std::vector<std::pair<double, int>> edges;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("run-", 0) != 0) continue;
    std::string text;
    ASSERT_TRUE(util::ReadFile(e.path().string(), &text, &err));
    double a = 0, b = 0;
    ASSERT_EQ(std::sscanf(text.c_str(), "%lf %lf", &a, &b), 2);
    edges.push_back({a, +1});
    edges.push_back({b, -1});
  }
  ASSERT_EQ(edges.size(), 2u * kJobs);
  std::sort(edges.begin(), edges.end());
  int now = 0, peak = 0;
  for (const auto& [t, d] : edges) peak = std::max(peak, now += d);
  EXPECT_EQ(peak, kGpus) << "runs at once: all 8 GPUs, one job each";
  std::string metrics = s.RenderMetrics();
  for (int k = 0; k < kGpus; ++k)
    EXPECT_NE(metrics.find("kz_slot_busy_seconds_total{slot=\"cuda:" + std::to_string(k) + "\"} "), std::string::npos);
  util::RemoveAll(dir);
}

// SIGTERM while a sample runs: Stop() gives the running job shutdown_grace_s, then kills its
// child (a sample ignoring the world, or one slowed by a loaded host, cannot hold the
// shutdown); the job stays "running" in the store, and the next start runs it again.
TEST(SchedulerSlotsTest, StopKillsARunningJobAfterTheGraceAndTheNextStartRunsIt) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "grace-", &err);
  ASSERT_FALSE(dir.empty()) << err;
  auto store = store::JobStore::Open(dir + "/jobs.db", &err);
  ASSERT_TRUE(store) << err;
  auto config = [&](const std::string& run_body) {
    Scheduler::Config c;
    c.worker = testing_support::FakeWorker(
        "import time\n"
        "if req.get('op') == 'run':\n" + run_body +
        "send({'type': 'result', 'status': 'correct', 'reason': 'fake', 'stages': {}, 'error': None,\n"
        "      'device': {'kind': 'cpu'}})\n");
    c.base.screen = false;
    c.base.cache_dir = dir + "/cache";
    c.base.timeout_s = 600;
    c.work_dir = dir + "/work";
    c.shutdown_grace_s = 1;
    return c;
  };
  std::string started = dir + "/started";
  Scheduler::Submission sub;
  sub.request.task = "class Model: pass\n";
  sub.request.candidate = "class ModelNew: pass\n";
  sub.request.backend = "triton";
  std::string id;
  {
    Scheduler s(store.get(), config("    open('" + started + "', 'w').write('1')\n    time.sleep(600)\n"));
    ASSERT_TRUE(s.Start(&err)) << err;
    auto r = s.Submit(sub);
    ASSERT_EQ(r.kind, Scheduler::SubmitKind::kQueued) << r.error;
    id = r.id;
    for (int i = 0; i < 600 && !std::filesystem::exists(started); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(std::filesystem::exists(started)) << "the run never started";
    auto t0 = std::chrono::steady_clock::now();
    s.Stop();
    double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(stop_s, 15) << "Stop() waited for the sample instead of its grace (1 s)";
    auto job = store->Get(id, &err);
    ASSERT_TRUE(job) << err;
    EXPECT_EQ(job->state, store::kRunning) << "an interrupted job is left to the next start";
  }
  Scheduler again(store.get(), config("    pass\n"));
  ASSERT_TRUE(again.Start(&err)) << err;
  auto job = again.Wait(id, std::chrono::seconds(120), &err);
  ASSERT_TRUE(job) << err;
  EXPECT_EQ(job->state, store::kDone);
  again.Stop();
  util::RemoveAll(dir);
}

}  // namespace
}  // namespace kz::service
