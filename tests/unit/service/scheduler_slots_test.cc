// Issue 7 on the CPU: kz serve's scheduler on an 8-GPU host keeps every GPU busy, one job
// at a time per GPU (or --gpu-concurrency at a time, issue 18), each job's child pinned to
// its slot's GPU. The GPUs are listed, not touched, and no child process starts: the
// scripted worker plays the run children (worker/call_set.h). Each run waits on a latch the
// test opens once the expected number of runs play at once, so "all slots at once" is
// proven by the count, not by wall time; the scripted worker records the most runs at once,
// in all and per CUDA_VISIBLE_DEVICES. (The real processes: tests/e2e/serve_slots.sh.)
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scripted_worker.h"
#include "service/scheduler.h"
#include "store/job_store.h"
#include "util/fs.h"

namespace kz::service {
namespace {
using testing_support::Script;
using testing_support::ScriptedLauncher;

// A run child that waits for the latch "go", then reports the GPU it was pinned to.
std::shared_ptr<ScriptedLauncher> LatchedRuns() {
  return std::make_shared<ScriptedLauncher>([](const worker::WorkerCall& call) {
    testing_support::SeenCall seen;
    seen.call = call;
    return Script().AwaitLatch("go").Result(
        {{"status", "correct"},
         {"reason", "fake"},
         {"stages", nlohmann::json::object()},
         {"error", nullptr},
         {"device", {{"kind", "cuda"}, {"index", 0}, {"visible", seen.Env("CUDA_VISIBLE_DEVICES")}}}});
  });
}

Scheduler::Config BaseConfig(const std::string& dir, const std::shared_ptr<ScriptedLauncher>& launcher) {
  Scheduler::Config c;
  c.worker = testing_support::ScriptedWorkerConfig();
  c.launcher = launcher;
  c.base.screen = false;
  c.base.cache_dir = dir + "/cache";
  c.base.timeout_s = 60;
  c.work_dir = dir + "/work";
  return c;
}

Scheduler::Submission Sample(int i) {
  Scheduler::Submission s;
  s.request.task = "class Model: pass\n";
  s.request.candidate = "class ModelNew: pass\n# " + std::to_string(i) + "\n";
  s.request.backend = "triton";
  return s;
}

// What a batch on fake GPUs did: jobs per GPU index, the most runs at once per GPU and in
// all, and the metrics after it.
struct SlotsRun {
  std::map<int, int> jobs_per_gpu;
  bool all_slots_at_once = false;  // every slot played a run at the same time
  size_t slots = 0;
  std::shared_ptr<ScriptedLauncher> launcher;
  std::string metrics;
};

// `jobs` samples on `gpus` listed GPUs with `per_gpu` slots each (gpu_concurrency).
SlotsRun RunOnFakeGpus(int gpus, int per_gpu, int jobs) {
  SlotsRun out;
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "slots-", &err);
  EXPECT_FALSE(dir.empty()) << err;
  auto store = store::JobStore::Open(dir + "/jobs.db", &err);
  EXPECT_TRUE(store) << err;
  if (!store) return out;
  out.launcher = LatchedRuns();
  Scheduler::Config c = BaseConfig(dir, out.launcher);
  c.base.gpu_concurrency = per_gpu;
  for (int k = 0; k < gpus; ++k) c.gpus.push_back(verify::Gpu{k, "NVIDIA H200", "9.0"});
  c.build_threads = 2;
  Scheduler s(store.get(), c);
  out.slots = s.Slots();
  EXPECT_TRUE(s.Start(&err)) << err;

  std::vector<Scheduler::Submission> batch;
  for (int i = 0; i < jobs; ++i) batch.push_back(Sample(i));
  auto r = s.SubmitBatch(batch);
  EXPECT_EQ(r.kind, Scheduler::SubmitKind::kQueued) << r.error;
  out.all_slots_at_once = out.launcher->WaitPlaying("run", out.slots, std::chrono::seconds(60));
  out.launcher->Open("go");
  for (const auto& item : r.items) {
    auto job = s.Wait(item.id, std::chrono::seconds(120), &err);
    EXPECT_TRUE(job && job->state == store::JobState::kDone && job->verdict_json) << err;
    if (!job || !job->verdict_json) continue;
    auto v = nlohmann::json::parse(*job->verdict_json);
    int index = v["device"].value("index", -1);
    EXPECT_EQ(v["device"].value("visible", ""), std::to_string(index)) << "the child saw another GPU: " << v.dump();
    ++out.jobs_per_gpu[index];
  }
  out.metrics = s.RenderMetrics();
  s.Stop();
  util::RemoveAll(dir);
  return out;
}

TEST(SchedulerSlotsTest, EightGpuSlotsRunAtOnceEachChildPinnedToItsSlot) {
  constexpr int kGpus = 8, kJobs = 16;  // 2 per GPU
  SlotsRun r = RunOnFakeGpus(kGpus, 1, kJobs);
  ASSERT_EQ(r.slots, static_cast<size_t>(kGpus));
  EXPECT_EQ(r.jobs_per_gpu.size(), static_cast<size_t>(kGpus)) << "every GPU slot ran jobs";
  for (const auto& [gpu, n] : r.jobs_per_gpu) EXPECT_GE(n, 1) << "cuda:" << gpu;
  EXPECT_TRUE(r.all_slots_at_once) << "the slots did not run at once";
  EXPECT_EQ(r.launcher->Peak("run"), static_cast<size_t>(kGpus)) << "runs at once: all 8 GPUs, one job each";
  for (int k = 0; k < kGpus; ++k) EXPECT_EQ(r.launcher->Peak("run@" + std::to_string(k)), 1u) << "GPU " << k;
  for (int k = 0; k < kGpus; ++k)
    EXPECT_NE(r.metrics.find("kz_slot_busy_seconds_total{slot=\"cuda:" + std::to_string(k) + "\"} "),
              std::string::npos);
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
  EXPECT_TRUE(r.all_slots_at_once) << "every slot ran at once";
  EXPECT_EQ(r.launcher->Peak("run"), static_cast<size_t>(kGpus * kPerGpu));
  for (int k = 0; k < kGpus; ++k)
    EXPECT_EQ(r.launcher->Peak("run@" + std::to_string(k)), static_cast<size_t>(kPerGpu)) << "GPU " << k;
  for (const char* slot : {"cuda:0/0", "cuda:0/2", "cuda:1/1"})
    EXPECT_NE(r.metrics.find("kz_slot_busy_seconds_total{slot=\"" + std::string(slot) + "\"} "), std::string::npos)
        << slot;
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
  auto hanging = std::make_shared<ScriptedLauncher>([](const worker::WorkerCall&) { return Script().Hang(); });
  Scheduler::Config c = BaseConfig(dir, hanging);
  c.base.timeout_s = 600;
  c.shutdown_grace_s = 1;
  std::string id;
  {
    Scheduler s(store.get(), c);
    ASSERT_TRUE(s.Start(&err)) << err;
    auto r = s.Submit(Sample(0));
    ASSERT_EQ(r.kind, Scheduler::SubmitKind::kQueued) << r.error;
    id = r.id;
    ASSERT_TRUE(hanging->WaitPlaying("run", 1, std::chrono::seconds(60))) << "the run never started";
    auto t0 = std::chrono::steady_clock::now();
    s.Stop();
    double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(stop_s, 15) << "Stop() waited for the sample instead of its grace (1 s)";
    EXPECT_GE(stop_s, 0.9) << "Stop() did not give the running job its grace";
    auto job = store->Get(id, &err);
    ASSERT_TRUE(job) << err;
    EXPECT_EQ(job->state, store::JobState::kRunning) << "an interrupted job is left to the next start";
    EXPECT_EQ(hanging->Alive(), 0u) << "every child was killed or dropped";
  }
  auto replying = std::make_shared<ScriptedLauncher>([](const worker::WorkerCall&) {
    return Script().Result({{"status", "correct"},
                            {"reason", "fake"},
                            {"stages", nlohmann::json::object()},
                            {"error", nullptr},
                            {"device", {{"kind", "cpu"}}}});
  });
  Scheduler again(store.get(), BaseConfig(dir, replying));
  ASSERT_TRUE(again.Start(&err)) << err;
  auto job = again.Wait(id, std::chrono::seconds(120), &err);
  ASSERT_TRUE(job) << err;
  EXPECT_EQ(job->state, store::JobState::kDone);
  again.Stop();
  util::RemoveAll(dir);
}

}  // namespace
}  // namespace kz::service
