// The kz worker loop's paths that fail a job before any Python runs (the verifier's
// own runs are covered end to end by tests/e2e/worker_redis.sh).
#include "queue/queue_worker.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <thread>

#include "queue/redis_server.h"
#include "util/fs.h"

namespace kz::queue {
namespace {

using namespace std::chrono_literals;

class QueueWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available())
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)";
    std::string err;
    ASSERT_TRUE(server_.Start(&err)) << err;
    config_ = {server_.url(), "t", "workers", "front", 300ms, std::chrono::seconds(60)};
    q_ = RedisJobQueue::Open(config_, &err);
    ASSERT_TRUE(q_ && q_->Setup(&err)) << err;
  }
  // Runs a worker until `n` verdicts were read (<= 10 s); returns them by job id.
  std::map<std::string, Verdict> RunWorker(size_t n, int64_t max_deliveries = 5) {
    QueueWorker::Config c{config_, "w1", {}, {}, {}, server_.dir() + "/work"};
    c.block = 100ms;
    c.max_deliveries = max_deliveries;
    QueueWorker worker(c);
    std::thread t([&] { worker.Run(); });
    std::map<std::string, Verdict> got;
    std::string err;
    for (int i = 0; i < 100 && got.size() < n; ++i)
      q_->ReadVerdicts("f", [&](const Verdict& v) { return got[v.job_id] = v, true; }, 100ms, &err);
    worker.Stop();
    t.join();
    return got;
  }
  testing::RedisServer server_;
  QueueConfig config_;
  std::unique_ptr<RedisJobQueue> q_;
};

TEST_F(QueueWorkerTest, BadOptionsAndBackendFailTheJob) {
  std::string entry, err;
  ASSERT_EQ(q_->Enqueue({"opts", "t", "c", "", R"({"nope": 1})"}, &entry, &err), EnqueueResult::kEnqueued);
  ASSERT_EQ(q_->Enqueue({"backend", "t", "c", "opencl", "{}"}, &entry, &err), EnqueueResult::kEnqueued);
  auto got = RunWorker(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["opts"].state, VerdictState::kFailed);
  EXPECT_NE(got["opts"].verdict_json.find("unknown option 'nope'"), std::string::npos)
      << got["opts"].verdict_json;
  EXPECT_EQ(got["backend"].state, VerdictState::kFailed);
  EXPECT_NE(got["backend"].verdict_json.find("unknown backend"), std::string::npos);
  EXPECT_EQ(got["backend"].worker, "w1");
  EXPECT_TRUE(std::filesystem::is_empty(server_.dir() + "/work")) << "job directories removed";
}

TEST_F(QueueWorkerTest, AJobDeliveredTooOftenIsGivenUp) {
  std::string entry, err;
  ASSERT_EQ(q_->Enqueue({"poison", "t", "c", "", "{}"}, &entry, &err), EnqueueResult::kEnqueued);
  ASSERT_TRUE(q_->Claim("dead1", 50ms, &err));
  std::this_thread::sleep_for(400ms);
  ASSERT_TRUE(q_->Reclaim("dead2", &err));  // 2 deliveries, both "died"
  std::this_thread::sleep_for(400ms);
  auto got = RunWorker(1, /*max_deliveries=*/2);  // its reclaim is the 3rd
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got["poison"].state, VerdictState::kFailed);
  EXPECT_NE(got["poison"].verdict_json.find("given up after 3 deliveries"), std::string::npos)
      << got["poison"].verdict_json;
}

TEST_F(QueueWorkerTest, StopsPromptlyWhenRedisIsAway) {
  server_.Kill();
  QueueWorker::Config c{config_, "w1", {}, {}, {}, server_.dir() + "/work"};
  QueueWorker worker(c);
  std::thread t([&] { worker.Run(); });
  std::this_thread::sleep_for(300ms);
  auto t0 = std::chrono::steady_clock::now();
  worker.Stop();
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

}  // namespace
}  // namespace kz::queue
