// Issue 7 on the CPU: kz serve's scheduler on an 8-GPU host keeps every GPU busy, one job
// at a time per GPU (or --gpu-concurrency at a time, issue 18), each job's child pinned to
// its slot's GPU. The GPUs are listed, not
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

constexpr double kRunS = 3.0;    // one sample's run (all slots must start within it)

// What a batch on fake GPUs did: jobs per GPU index, the most runs at once per GPU and in
// all, the wall time and the metrics after it.
struct SlotsRun {
  std::map<int, int> jobs_per_gpu;
  std::map<std::string, int> peak_per_gpu;  // by CUDA_VISIBLE_DEVICES
  int peak = 0;
  double wall_s = 0;
  size_t slots = 0;
  std::string metrics;
};

// `jobs` samples on `gpus` listed GPUs with `per_gpu` slots each (gpu_concurrency). The
// fake worker sleeps kRunS like a GPU-bound sample and writes its start, end and device.
SlotsRun RunOnFakeGpus(int gpus, int per_gpu, int jobs) {
  SlotsRun out;
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "slots-", &err);
  EXPECT_FALSE(dir.empty()) << err;
  auto store = store::JobStore::Open(dir + "/jobs.db", &err);
  EXPECT_TRUE(store) << err;
  if (!store) return out;
  Scheduler::Config c;
  c.worker = testing_support::FakeWorker(
      "import time\n"
      "t0 = time.time()\n"
      "time.sleep(" + std::to_string(kRunS) + ")\n"
      "open('" + dir + "/run-%d' % os.getpid(), 'w').write('%f %f %s' % (t0, time.time(), os.environ.get('CUDA_VISIBLE_DEVICES')))\n"
      "send({'type': 'result', 'status': 'correct', 'reason': 'fake', 'stages': {}, 'error': None,\n"
      "      'device': {'kind': 'cuda', 'index': 0, 'visible': os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')}})\n");
  c.base.screen = false;
  c.base.cache_dir = dir + "/cache";
  c.base.timeout_s = 60;
  c.base.gpu_concurrency = per_gpu;
  for (int k = 0; k < gpus; ++k) c.gpus.push_back(verify::Gpu{k, "NVIDIA H200", "9.0"});
  c.build_threads = 2;
  c.work_dir = dir + "/work";
  Scheduler s(store.get(), c);
  out.slots = s.Slots();
  EXPECT_TRUE(s.Start(&err)) << err;

  std::vector<Scheduler::Submission> batch(jobs);
  for (int i = 0; i < jobs; ++i) {
    batch[i].request.task = "class Model: pass\n";
    batch[i].request.candidate = "class ModelNew: pass\n# " + std::to_string(i) + "\n";
    batch[i].request.backend = "triton";
  }
  auto t0 = std::chrono::steady_clock::now();
  auto r = s.SubmitBatch(batch);
  EXPECT_EQ(r.kind, Scheduler::SubmitKind::kQueued) << r.error;
  for (const auto& item : r.items) {
    auto job = s.Wait(item.id, std::chrono::seconds(120), &err);
    EXPECT_TRUE(job && job->state == store::JobState::kDone && job->verdict_json) << err;
    if (!job || !job->verdict_json) continue;
    auto v = nlohmann::json::parse(*job->verdict_json);
    int index = v["device"].value("index", -1);
    EXPECT_EQ(v["device"].value("visible", ""), std::to_string(index)) << "the child saw another GPU: " << v.dump();
    ++out.jobs_per_gpu[index];
  }
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.metrics = s.RenderMetrics();
  s.Stop();
  // The most runs overlapping at one instant, per GPU and in all.
  std::map<std::string, std::vector<std::pair<double, int>>> edges;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("run-", 0) != 0) continue;
    std::string text;
    EXPECT_TRUE(util::ReadFile(e.path().string(), &text, &err));
    double a = 0, b = 0;
    char visible[32] = {0};
    EXPECT_EQ(std::sscanf(text.c_str(), "%lf %lf %31s", &a, &b, visible), 3);
    for (const std::string& key : {std::string(visible), std::string("all")}) {
      edges[key].push_back({a, +1});
      edges[key].push_back({b, -1});
    }
  }
  EXPECT_EQ(edges["all"].size(), 2u * jobs);
  for (auto& [key, list] : edges) {
    std::sort(list.begin(), list.end());
    int now = 0, peak = 0;
    for (const auto& [t, d] : list) peak = std::max(peak, now += d);
    if (key == "all") out.peak = peak;
    else out.peak_per_gpu[key] = peak;
  }
  util::RemoveAll(dir);
  return out;
}

TEST(SchedulerSlotsTest, EightGpuSlotsRunAtOnceEachChildPinnedToItsSlot) {
  constexpr int kGpus = 8, kJobs = 16;  // 2 per GPU
  SlotsRun r = RunOnFakeGpus(kGpus, 1, kJobs);
  ASSERT_EQ(r.slots, static_cast<size_t>(kGpus));
  EXPECT_EQ(r.jobs_per_gpu.size(), static_cast<size_t>(kGpus)) << "every GPU slot ran jobs";
  for (const auto& [gpu, n] : r.jobs_per_gpu) EXPECT_GE(n, 1) << "cuda:" << gpu;
  // Serial would be kJobs x kRunS = 48 s; 8 at once ~6 s plus the children's starts.
  EXPECT_LT(r.wall_s, kJobs * kRunS / 3) << "the slots did not run at once";
  EXPECT_EQ(r.peak, kGpus) << "runs at once: all 8 GPUs, one job each";
  for (const auto& [gpu, peak] : r.peak_per_gpu) EXPECT_EQ(peak, 1) << "GPU " << gpu;
  for (int k = 0; k < kGpus; ++k)
    EXPECT_NE(r.metrics.find("kz_slot_busy_seconds_total{slot=\"cuda:" + std::to_string(k) + "\"} "), std::string::npos);
  EXPECT_EQ(r.metrics.find("kz_gate_"), std::string::npos) << "no gate with one slot per GPU";
}

// --gpu-concurrency 3 on two GPUs: six slots, three per GPU sharing its gate, each child
// pinned to its slot's GPU, never more than three at once on one GPU; /metrics has each
// device's gate.
TEST(SchedulerSlotsTest, GpuConcurrencyRunsThatManySlotsPerGpuEachPinned) {
  constexpr int kGpus = 2, kPerGpu = 3, kJobs = 12;
  SlotsRun r = RunOnFakeGpus(kGpus, kPerGpu, kJobs);
  ASSERT_EQ(r.slots, static_cast<size_t>(kGpus * kPerGpu));
  EXPECT_EQ(r.jobs_per_gpu.size(), static_cast<size_t>(kGpus));
  EXPECT_EQ(r.peak, kGpus * kPerGpu) << "every slot ran at once";
  for (const auto& [gpu, peak] : r.peak_per_gpu) EXPECT_EQ(peak, kPerGpu) << "GPU " << gpu;
  EXPECT_LT(r.wall_s, kJobs * kRunS / 3);
  for (const char* slot : {"cuda:0/0", "cuda:0/2", "cuda:1/1"})
    EXPECT_NE(r.metrics.find("kz_slot_busy_seconds_total{slot=\"" + std::string(slot) + "\"} "), std::string::npos) << slot;
  for (const char* dev : {"cuda:0", "cuda:1"})
    EXPECT_NE(r.metrics.find("kz_gate_exclusive_total{device=\"" + std::string(dev) + "\"} 0"), std::string::npos)
        << r.metrics;
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
    EXPECT_EQ(job->state, store::JobState::kRunning) << "an interrupted job is left to the next start";
  }
  Scheduler again(store.get(), config("    pass\n"));
  ASSERT_TRUE(again.Start(&err)) << err;
  auto job = again.Wait(id, std::chrono::seconds(120), &err);
  ASSERT_TRUE(job) << err;
  EXPECT_EQ(job->state, store::JobState::kDone);
  again.Stop();
  util::RemoveAll(dir);
}

}  // namespace
}  // namespace kz::service
