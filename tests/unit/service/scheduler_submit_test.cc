// Scheduler::SubmitBatch under concurrency (group commit): submitters racing with the same
// content get one job between them, and each batch is still accepted whole or refused
// whole when the queue fills. A real SQLite store; jobs are accepted, never run (--no-run):
// the scripted worker fails the test if a call is started.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "scripted_worker.h"
#include "service/scheduler.h"
#include "store/job_store.h"
#include "util/fs.h"

namespace kz::service {
namespace {

class SchedulerSubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "submit-", &err);
    ASSERT_FALSE(dir_.empty()) << err;
    store_ = store::JobStore::Open(dir_ + "/jobs.db", &err);
    ASSERT_TRUE(store_) << err;
  }
  void TearDown() override { util::RemoveAll(dir_); }
  Scheduler::Config Config(size_t max_queue) {
    Scheduler::Config c;
    c.worker = testing_support::ScriptedWorkerConfig();
    c.launcher = std::make_shared<testing_support::ScriptedLauncher>([](const worker::WorkerCall&) {
      ADD_FAILURE() << "--no-run: no worker call";
      return testing_support::Script().Exit(1);
    });
    c.base.cache_dir = dir_ + "/cache";
    c.work_dir = dir_ + "/work";
    c.run_jobs = false;
    c.max_queue = max_queue;
    return c;
  }
  static Scheduler::Submission Sample(int n) {
    Scheduler::Submission s;
    s.request.task = "class Model: pass\n";
    s.request.candidate = "class ModelNew: pass\n# " + std::to_string(n) + "\n";
    s.request.backend = "triton";
    return s;
  }
  std::string dir_;
  std::unique_ptr<store::JobStore> store_;
};

TEST_F(SchedulerSubmitTest, RacingSubmittersOfTheSameContentShareOneJob) {
  Scheduler s(store_.get(), Config(4096));
  std::string err;
  ASSERT_TRUE(s.Start(&err)) << err;
  constexpr int kThreads = 32, kEach = 100, kDistinct = 100;  // all in step: same content at once
  std::mutex mu;
  std::map<int, std::set<std::string>> ids;  // content -> the ids its submitters got
  std::atomic<int> queued{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        int n = i % kDistinct;
        auto r = s.Submit(Sample(n));
        if (r.kind == Scheduler::SubmitKind::kQueued) ++queued;
        if (r.kind != Scheduler::SubmitKind::kQueued && r.kind != Scheduler::SubmitKind::kExisting) ++errors;
        std::lock_guard lock(mu);
        ids[n].insert(r.id);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(queued, kDistinct) << "each content accepted once";
  ASSERT_EQ(ids.size(), static_cast<size_t>(kDistinct));
  for (const auto& [n, set] : ids) EXPECT_EQ(set.size(), 1u) << "content " << n << " got several jobs";
  EXPECT_EQ(s.QueueDepth(), static_cast<size_t>(kDistinct));
  std::string m = s.RenderMetrics();
  EXPECT_NE(m.find("kz_requests_total{outcome=\"accepted\"} " + std::to_string(kDistinct) + "\n"), std::string::npos) << m;
  EXPECT_NE(m.find("kz_requests_total{outcome=\"deduplicated\"} " + std::to_string(kThreads * kEach - kDistinct) + "\n"),
            std::string::npos) << m;
  std::vector<std::pair<std::string, int64_t>> counts;
  ASSERT_TRUE(store_->CountByState(&counts, &err)) << err;
  for (const auto& [state, n] : counts) EXPECT_EQ(n, state == "queued" ? kDistinct : 0) << state;
  s.Stop();
}

TEST_F(SchedulerSubmitTest, ConcurrentBatchesAreAcceptedWholeOrRefusedWholeWhenTheQueueFills) {
  Scheduler s(store_.get(), Config(10));
  std::string err;
  ASSERT_TRUE(s.Start(&err)) << err;
  constexpr int kThreads = 8, kBatch = 3;
  std::atomic<int> accepted{0}, full{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::vector<Scheduler::Submission> batch;
      for (int i = 0; i < kBatch; ++i) batch.push_back(Sample(t * kBatch + i));
      auto r = s.SubmitBatch(batch);
      if (r.kind == Scheduler::SubmitKind::kQueued) {
        ++accepted;
        EXPECT_EQ(r.items.size(), static_cast<size_t>(kBatch));
      } else if (r.kind == Scheduler::SubmitKind::kFull) {
        ++full;
        EXPECT_TRUE(r.items.empty());
        EXPECT_NE(r.error.find("the batch needs 3"), std::string::npos) << r.error;
      } else {
        ++other;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(other, 0);
  EXPECT_EQ(accepted, 3) << "10 places hold three batches of 3";
  EXPECT_EQ(full, kThreads - 3);
  EXPECT_EQ(s.QueueDepth(), static_cast<size_t>(3 * kBatch)) << "no part of a refused batch queued";
  s.Stop();
}

TEST_F(SchedulerSubmitTest, AKeyMatchWithOtherStoredSourcesIsNotADuplicate) {
  // The key is a hash of untrusted inputs: a stored job with the same key but other sources
  // (a collision, or a tampered store) must not hand its verdict to this request.
  Scheduler s(store_.get(), Config(4096));
  std::string err;
  ASSERT_TRUE(s.Start(&err)) << err;
  auto first = s.Submit(Sample(1));
  ASSERT_EQ(first.kind, Scheduler::SubmitKind::kQueued) << first.error;
  auto same = s.Submit(Sample(1));
  EXPECT_EQ(same.kind, Scheduler::SubmitKind::kExisting);
  EXPECT_EQ(same.id, first.id);
  auto stored = store_->Get(first.id, &err);
  ASSERT_TRUE(stored) << err;
  store::Job forged = *stored;  // same key, another candidate, a verdict already in
  forged.id = "forged0000000001";
  forged.candidate_source = "class ModelNew: pass  # returns cached outputs\n";
  forged.submitted_at_ms += 1000;
  ASSERT_TRUE(store_->Insert(forged, &err)) << err;
  ASSERT_TRUE(store_->Finish(forged.id, store::JobState::kDone, R"({"status":"correct"})", &err)) << err;
  auto again = s.Submit(Sample(1));
  EXPECT_EQ(again.kind, Scheduler::SubmitKind::kQueued) << "deduplicated to " << again.id;
  EXPECT_NE(again.id, forged.id);
  s.Stop();
}

}  // namespace
}  // namespace kz::service
