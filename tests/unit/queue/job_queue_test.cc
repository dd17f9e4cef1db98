#include "queue/job_queue.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "queue/redis_server.h"
#include "queue/verdict_reader.h"

namespace kz::queue {
namespace {

using namespace std::chrono_literals;

class JobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available())
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)";
    std::string err;
    ASSERT_TRUE(server_.Start(&err)) << err;
    q_ = Open();
    ASSERT_TRUE(q_->Setup(&err)) << err;
  }
  std::unique_ptr<RedisJobQueue> Open() {
    std::string err;
    auto q = RedisJobQueue::Open({server_.url(), "t", "workers", "front", 300ms, std::chrono::seconds(60)}, &err);
    EXPECT_TRUE(q) << err;
    return q;
  }
  Job MakeJob(const std::string& id) { return {id, "task " + id, "cand " + id, "triton", R"({"trials":2})"}; }
  void Enqueue(const std::string& id) {
    std::string entry, err;
    ASSERT_EQ(q_->Enqueue(MakeJob(id), &entry, &err), EnqueueResult::kEnqueued) << err;
  }
  ClaimedJob MustClaim(RedisJobQueue& q, const std::string& consumer) {
    std::string err;
    auto c = q.Claim(consumer, 100ms, &err);
    EXPECT_TRUE(err.empty()) << err;
    return c.value_or(ClaimedJob{});
  }
  // Reads verdicts until none comes; returns them by job id (each delivery counted).
  std::map<std::string, std::vector<Verdict>> Drain(RedisJobQueue& q, const std::string& consumer = "f") {
    std::map<std::string, std::vector<Verdict>> got;
    std::string err;
    while (q.ReadVerdicts(consumer, [&](const Verdict& v) { return got[v.job_id].push_back(v), true; }, 100ms, &err) > 0) {
    }
    EXPECT_TRUE(err.empty()) << err;
    return got;
  }
  std::string Str(const std::vector<std::string>& cmd) {
    RedisClient c(RedisClient::Options{{"127.0.0.1", server_.port(), 0}});
    RedisReply r;
    std::string err;
    EXPECT_TRUE(c.Call(cmd, &r, &err)) << err;
    return r.AsString();
  }
  int64_t Int(const std::vector<std::string>& cmd) {
    RedisClient c(RedisClient::Options{{"127.0.0.1", server_.port(), 0}});
    RedisReply r;
    std::string err;
    EXPECT_TRUE(c.Call(cmd, &r, &err)) << err;
    return r.IsArray() ? static_cast<int64_t>(r.elements.size()) : r.integer;
  }
  testing::RedisServer server_;
  std::unique_ptr<RedisJobQueue> q_;
};

TEST(RedisJobQueueOpen, RejectsABadUrl) {
  std::string err;
  EXPECT_EQ(RedisJobQueue::Open({"http://x:1"}, &err), nullptr);
  EXPECT_NE(err.find("must start with redis://"), std::string::npos) << err;
}

TEST_F(JobQueueTest, EnqueueClaimCompleteDeliversTheVerdictOnce) {
  Enqueue("j1");
  ClaimedJob c = MustClaim(*q_, "w1");
  EXPECT_EQ(c.job.id, "j1");
  EXPECT_EQ(c.job.task, "task j1");
  EXPECT_EQ(c.job.candidate, "cand j1");
  EXPECT_EQ(c.job.backend, "triton");
  EXPECT_EQ(c.job.options_json, R"({"trials":2})");
  EXPECT_FALSE(c.reclaimed);
  EXPECT_TRUE(c.malformed.empty());
  EXPECT_GT(c.enqueued_ms, 0);
  std::string err;
  ASSERT_EQ(q_->Complete(c, {"j1", VerdictState::kDone, R"({"status":"correct"})", "w1"}, &err), CompleteResult::kPublished) << err;
  EXPECT_EQ(Int({"XLEN", "t:jobs"}), 0);  // acked and deleted
  EXPECT_EQ(Str({"HGET", "t:job:j1", "state"}), "done") << "the wire spelling of the state";
  auto got = Drain(*q_);
  ASSERT_EQ(got["j1"].size(), 1u);
  EXPECT_EQ(got["j1"][0].state, VerdictState::kDone);
  EXPECT_EQ(got["j1"][0].verdict_json, R"({"status":"correct"})");
  EXPECT_EQ(got["j1"][0].worker, "w1");
  EXPECT_EQ(Int({"XLEN", "t:verdicts"}), 0);
  EXPECT_TRUE(Drain(*q_).empty());
  EXPECT_FALSE(q_->Claim("w1", 50ms, &err)) << "nothing left";
}

TEST_F(JobQueueTest, EnqueueIsIdempotentPerJobId) {
  std::string first, again, err;
  ASSERT_EQ(q_->Enqueue(MakeJob("j1"), &first, &err), EnqueueResult::kEnqueued) << err;
  ASSERT_EQ(q_->Enqueue(MakeJob("j1"), &again, &err), EnqueueResult::kDuplicate) << err;
  EXPECT_EQ(first, again);
  ClaimedJob c = MustClaim(*q_, "w1");
  ASSERT_EQ(q_->Complete(c, {"j1", VerdictState::kDone, "{}", "w1"}, &err), CompleteResult::kPublished) << err;
  ASSERT_EQ(q_->Enqueue(MakeJob("j1"), &again, &err), EnqueueResult::kDuplicate) << "finished: still known";
  EXPECT_FALSE(q_->Claim("w2", 50ms, &err));
  EXPECT_EQ(Drain(*q_)["j1"].size(), 1u);
  EXPECT_EQ(q_->Enqueue(MakeJob(""), &again, &err), EnqueueResult::kError);
}

TEST_F(JobQueueTest, ReclaimTakesOverOnlyIdleEntries) {
  Enqueue("j1");
  auto w2 = Open();
  ClaimedJob c = MustClaim(*q_, "w1");
  std::string err;
  EXPECT_FALSE(w2->Reclaim("w2", &err)) << "not idle yet";
  EXPECT_TRUE(err.empty()) << err;
  std::this_thread::sleep_for(400ms);
  auto r = w2->Reclaim("w2", &err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(r->entry, c.entry);
  EXPECT_EQ(r->job.id, "j1");
  EXPECT_TRUE(r->reclaimed);
  bool owned = true;
  ASSERT_TRUE(q_->Touch("w1", c.entry, &owned, &err)) << err;
  EXPECT_FALSE(owned) << "w1 lost it to w2";
  ASSERT_TRUE(w2->Touch("w2", c.entry, &owned, &err)) << err;
  EXPECT_TRUE(owned);
}

TEST_F(JobQueueTest, TouchKeepsARunningJobFromBeingReclaimed) {
  Enqueue("j1");
  ClaimedJob c = MustClaim(*q_, "w1");
  auto w2 = Open();
  std::string err;
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(150ms);
    bool owned = false;
    ASSERT_TRUE(q_->Touch("w1", c.entry, &owned, &err)) << err;
    EXPECT_TRUE(owned);
    EXPECT_FALSE(w2->Reclaim("w2", &err)) << "touched " << i;
  }
}

TEST_F(JobQueueTest, SecondVerdictOfAJobIsDropped) {
  Enqueue("j1");
  ClaimedJob slow = MustClaim(*q_, "w1");
  std::this_thread::sleep_for(400ms);
  auto w2 = Open();
  std::string err;
  auto fast = w2->Reclaim("w2", &err);
  ASSERT_TRUE(fast) << err;
  EXPECT_EQ(w2->Complete(*fast, {"j1", VerdictState::kDone, R"({"by":"w2"})", "w2"}, &err), CompleteResult::kPublished) << err;
  EXPECT_EQ(q_->Complete(slow, {"j1", VerdictState::kDone, R"({"by":"w1"})", "w1"}, &err), CompleteResult::kDuplicate) << err;
  auto got = Drain(*q_);
  ASSERT_EQ(got["j1"].size(), 1u);
  EXPECT_EQ(got["j1"][0].worker, "w2");
  EXPECT_EQ(Int({"XPENDING", "t:jobs", "workers", "-", "+", "10"}), 0);
}

TEST_F(JobQueueTest, ReaderDropsAVerdictOfAJobAlreadyDelivered) {
  Enqueue("j1");
  ClaimedJob c = MustClaim(*q_, "w1");
  std::string err;
  ASSERT_EQ(q_->Complete(c, {"j1", VerdictState::kDone, "{}", "w1"}, &err), CompleteResult::kPublished) << err;
  ASSERT_EQ(Drain(*q_)["j1"].size(), 1u);
  // A stray second verdict (e.g. written by hand) reaches the stream anyway.
  Int({"XADD", "t:verdicts", "*", "id", "j1", "state", "done", "verdict", "{}", "worker", "rogue"});
  EXPECT_TRUE(Drain(*q_).empty());
  EXPECT_EQ(Int({"XPENDING", "t:verdicts", "front", "-", "+", "10"}), 0) << "acked anyway";
}

TEST(VerdictStateNames, RoundTripAndRefuseAnyOtherSpelling) {
  EXPECT_EQ(ToString(VerdictState::kDone), "done");  // the wire format: never changes
  EXPECT_EQ(ToString(VerdictState::kFailed), "failed");
  for (VerdictState s : {VerdictState::kDone, VerdictState::kFailed}) EXPECT_EQ(ParseVerdictState(ToString(s)), s);
  for (const char* bad : {"", "Done", "done ", "queued", "cancelled", "0", "1"})
    EXPECT_FALSE(ParseVerdictState(bad)) << bad;
  EXPECT_EQ(nlohmann::json(VerdictState::kFailed), "failed") << "in JSON, the spelling, not the number";
}

TEST_F(JobQueueTest, AVerdictOfUnknownStateFailsItsJobWithTheReason) {
  Enqueue("j1");
  MustClaim(*q_, "w1");
  Int({"XADD", "t:verdicts", "*", "id", "j1", "state", "paused", "verdict", R"({"status":"correct"})", "worker", "rogue"});
  auto got = Drain(*q_);
  ASSERT_EQ(got["j1"].size(), 1u);
  EXPECT_EQ(got["j1"][0].state, VerdictState::kFailed);
  EXPECT_NE(got["j1"][0].verdict_json.find("unknown state 'paused'"), std::string::npos) << got["j1"][0].verdict_json;
  EXPECT_EQ(nlohmann::json::parse(got["j1"][0].verdict_json).size(), 1u) << "only the error, not the claimed verdict";
  EXPECT_EQ(got["j1"][0].worker, "rogue");
  EXPECT_EQ(Int({"XPENDING", "t:verdicts", "front", "-", "+", "10"}), 0) << "acked";
}

TEST_F(JobQueueTest, RefusedVerdictStaysPendingForTheNextFront) {
  Enqueue("j1");
  ClaimedJob c = MustClaim(*q_, "w1");
  std::string err;
  ASSERT_EQ(q_->Complete(c, {"j1", VerdictState::kFailed, R"({"error":"x"})", "w1"}, &err), CompleteResult::kPublished) << err;
  int calls = 0;
  EXPECT_EQ(q_->ReadVerdicts("f", [&](const Verdict&) { return ++calls, false; }, 100ms, &err), 0) << err;
  EXPECT_EQ(calls, 1);
  q_.reset();  // the front "crashes"
  auto same_name = Open();
  auto got = Drain(*same_name, "f");
  ASSERT_EQ(got["j1"].size(), 1u);
  EXPECT_EQ(got["j1"][0].state, VerdictState::kFailed);
}

TEST_F(JobQueueTest, ADeadFrontsPendingVerdictGoesToAnotherFrontAfterTheTimeout) {
  Enqueue("j1");
  ClaimedJob c = MustClaim(*q_, "w1");
  std::string err;
  ASSERT_EQ(q_->Complete(c, {"j1", VerdictState::kDone, "{}", "w1"}, &err), CompleteResult::kPublished) << err;
  EXPECT_EQ(q_->ReadVerdicts("old", [](const Verdict&) { return false; }, 100ms, &err), 0) << err;
  std::this_thread::sleep_for(400ms);
  auto other = Open();
  EXPECT_EQ(Drain(*other, "new")["j1"].size(), 1u);
}

TEST_F(JobQueueTest, ARestartedWorkerGetsItsOwnPendingJobFirst) {
  Enqueue("j1");
  Enqueue("j2");
  ClaimedJob c = MustClaim(*q_, "w1");
  auto restarted = Open();  // a new process under the same name
  ClaimedJob again = MustClaim(*restarted, "w1");
  EXPECT_EQ(again.entry, c.entry);
  EXPECT_TRUE(again.reclaimed);
  std::string err;
  ASSERT_EQ(restarted->Complete(again, {"j1", VerdictState::kDone, "{}", "w1"}, &err), CompleteResult::kPublished) << err;
  EXPECT_EQ(MustClaim(*restarted, "w1").job.id, "j2");
}

TEST_F(JobQueueTest, AMalformedEntryIsFlagged) {
  Int({"XADD", "t:jobs", "*", "foo", "bar"});
  ClaimedJob c = MustClaim(*q_, "w1");
  EXPECT_NE(c.malformed.find("lacks field(s): id, task, candidate"), std::string::npos) << c.malformed;
  std::string err;
  EXPECT_EQ(q_->Complete(c, {"", VerdictState::kFailed, "{}", "w1"}, &err), CompleteResult::kDuplicate) << "no id: dropped";
  EXPECT_EQ(Int({"XLEN", "t:jobs"}), 0);
}

TEST_F(JobQueueTest, GroupsAreRecreatedWhenRedisLostItsData) {
  Int({"FLUSHALL"});
  std::string err;
  EXPECT_FALSE(q_->Claim("w1", 50ms, &err));
  EXPECT_TRUE(err.empty()) << err;
  Enqueue("j1");
  EXPECT_EQ(MustClaim(*q_, "w1").job.id, "j1");
}

TEST_F(JobQueueTest, SurvivesARedisRestart) {
  Enqueue("j1");
  Enqueue("j2");
  ClaimedJob c1 = MustClaim(*q_, "w1");
  server_.Kill();
  std::string entry, err;
  EXPECT_EQ(q_->Enqueue(MakeJob("j3"), &entry, &err), EnqueueResult::kError);
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(q_->Claim("w1", 50ms, &err));
  EXPECT_FALSE(err.empty());
  ASSERT_TRUE(server_.Start(&err)) << err;
  CompleteResult r = CompleteResult::kError;
  for (int i = 0; i < 100 && r == CompleteResult::kError; ++i) {
    r = q_->Complete(c1, {"j1", VerdictState::kDone, "{}", "w1"}, &err);
    if (r == CompleteResult::kError) std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(r, CompleteResult::kPublished) << err;
  ClaimedJob c2 = MustClaim(*q_, "w1");  // enqueued before the crash: kept by the AOF
  EXPECT_EQ(c2.job.id, "j2");
  ASSERT_EQ(q_->Complete(c2, {"j2", VerdictState::kDone, "{}", "w1"}, &err), CompleteResult::kPublished) << err;
  auto got = Drain(*q_);
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(got["j1"].size(), 1u);
  EXPECT_EQ(got["j2"].size(), 1u);
}

TEST_F(JobQueueTest, ReclaimCountsDeliveries) {
  Enqueue("j1");
  EXPECT_EQ(MustClaim(*q_, "w1").deliveries, 1);
  for (int want = 2; want <= 3; ++want) {
    std::this_thread::sleep_for(400ms);
    std::string err;
    auto r = q_->Reclaim("w" + std::to_string(want), &err);
    ASSERT_TRUE(r) << err;
    EXPECT_EQ(r->deliveries, want);
  }
}

TEST_F(JobQueueTest, VerdictReaderThreadDeliversUntilStopped) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> got;
  VerdictReader reader({server_.url(), "t"}, "f", [&](const Verdict& v) {
    std::lock_guard lock(mu);
    got.push_back(v.job_id);
    cv.notify_all();
    return true;
  });
  std::string err;
  ASSERT_TRUE(reader.Start(&err)) << err;
  for (const char* id : {"j1", "j2"}) {
    Enqueue(id);
    ClaimedJob c = MustClaim(*q_, "w1");
    ASSERT_EQ(q_->Complete(c, {id, VerdictState::kDone, "{}", "w1"}, &err), CompleteResult::kPublished) << err;
  }
  std::unique_lock lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, 5s, [&] { return got.size() == 2; }));
  lock.unlock();
  auto t0 = std::chrono::steady_clock::now();
  reader.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_EQ(got, (std::vector<std::string>{"j1", "j2"}));
  VerdictReader bad({"redis://h:0"}, "f", [](const Verdict&) { return true; });
  EXPECT_FALSE(bad.Start(&err));
  EXPECT_NE(err.find("port must be"), std::string::npos) << err;
}

}  // namespace
}  // namespace kz::queue
