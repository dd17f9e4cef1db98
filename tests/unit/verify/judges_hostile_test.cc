// The judges over a run child's facts against a hostile child (it has just run candidate
// code): each case is an input a code review found to crash, hang, overflow or fool the
// supervisor (verify/run_channel.h, trace_facts.h, trace_joins.h, trace_judge.h,
// timing_stats.h, run_judges.h; worker/worker_client.h for the frame depth).
#include <gtest/gtest.h>

#include "worker/call_set.h"

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "trace_records.h"
#include "util/frame.h"
#include "util/subprocess.h"
#include "verify/judge_fixtures.h"
#include "verify/run_channel.h"
#include "verify/run_judges.h"
#include "verify/sample.h"
#include "verify/timing_stats.h"
#include "verify/trace_joins.h"
#include "verify/verdict.h"
#include "worker/worker_client.h"

namespace kz::verify {
namespace {
using namespace trace_test;  // NOLINT(google-build-using-namespace): the record builders
using judge_test::Measured;
using judge_test::Verdict;

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

json Facts(const std::vector<json>& windows) {
  json wire = json::array();
  for (const auto& w : windows) wire.push_back(Wire(w));
  return {{"library", "/lib/libcupti.so.13"}, {"candidate_kernel_names", {"relu_kernel"}}, {"windows", wire}};
}

// Finding 1: a child flooding its channel is cut at the cap and killed, not buffered forever.
TEST(RunChannelHostile, FloodedChannelIsCappedAndTheChildKilled) {
  worker::WorkerConfig config;
  config.python = "python3";
  worker::WorkerCall call;  // the shell runs in front of the worker's argv and never execs it
  call.argv_prefix = {"/bin/sh", "-c", "head -c 8388608 /dev/zero >&3; exec sleep 30", "sh"};
  call.wall_limit_s = 20;
  call.token = "token";
  auto set = worker::ProcessLauncher()->NewSet(config);
  auto id = set->Start(call, worker::CallMode{/*hold=*/false, /*stream=*/true});
  auto t0 = std::chrono::steady_clock::now();
  util::ProcessResult r = WaitRunChild(*set, id, "token", nullptr, nullptr, {}, nullptr, size_t(1) << 20);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.channel_data.size(), size_t(1) << 20);
  EXPECT_TRUE(r.channel_truncated);
  EXPECT_NE(r.end, util::ProcessEnd::kTimedOut);
  EXPECT_LT(s, 15.0);
  EXPECT_NE(r.stderr_tail.find("was killed"), std::string::npos) << r.stderr_tail;
}

// Finding 3: a fact cut in the middle of a UTF-8 character made verdict.dump() throw.
TEST(TraceFactsHostile, QuotedFactsNeverCutACharacter) {
  json f = Facts({Window({Rec("kernel", "relu_kernel", 1, 2), Marker(5)})});
  f["windows"][0]["records"][0][0] = Repeat("é", 21);
  std::string error;
  EXPECT_FALSE(ParseTraceFacts(f, &error));
  EXPECT_NE(error.find("unknown record kind"), std::string::npos);
  EXPECT_NO_THROW(json(error).dump());
  f["windows"][0]["records"][0][0] = "kernel";
  f["windows"][0]["records"][0][3] = Repeat("é", 21);
  EXPECT_FALSE(ParseTraceFacts(f, &error));
  EXPECT_NO_THROW(json(error).dump());
  EXPECT_EQ(QuoteFact(json(Repeat("é", 21))), "\"" + Repeat("é", 21) + "\"");  // 23 code points: whole
  EXPECT_EQ(QuoteFact(json(Repeat("é", 50))), "\"" + Repeat("é", 39));         // 40 code points
}

TEST(RunJudgesHostile, QuotedStatusAndTimesNeverCutACharacter) {
  json timing = Measured(0.5, 0.25);
  timing["status"] = Repeat("é", 21);
  json v = Verdict("correct", {{"timing", timing}});
  RunJudges({}).Apply(v);
  EXPECT_EQ(v["status"], "runtime_error");
  EXPECT_NO_THROW(v.dump());
  timing = Measured(0.5, 0.25);
  timing["candidate_ms"][3] = Repeat("é", 21);
  v = Verdict("correct", {{"timing", timing}});
  RunJudges({}).Apply(v);
  EXPECT_EQ(v["status"], "runtime_error");
  EXPECT_NO_THROW(v.dump());
}

// Finding 2: a chain of ~65k event record/wait hops across streams recursed once per hop
// (a verifier thread's stack) and scanned every wait per hop (quadratic).
TraceWindow Chain(size_t hops, bool reaches_caller) {
  TraceWindow w;
  w.label = "trial 0";
  w.caller_stream = kCaller;
  w.dependencies = "";
  w.names = {"side_kernel", "kz marker", "event", "wait"};
  auto stream = [](size_t i) { return uint64_t(100 + i); };
  uint64_t corr = 1;
  w.records.push_back({TraceKind::kKernel, 0, stream(0), 10, 500, 0, 0, corr++});
  for (size_t i = 0; i < hops; ++i) {
    uint64_t next = i + 1 == hops && reaches_caller ? kCaller : stream(i + 1);
    w.records.push_back({TraceKind::kEventRecord, 2, stream(i), 0, 0, 0, 0, corr++, i + 1});
    w.records.push_back({TraceKind::kStreamWait, 3, next, 0, 0, 0, 0, corr++, i + 1});
  }
  w.records.push_back({TraceKind::kMarker, 1, kCaller, 600, 601, 0, 0, corr++});
  return w;
}

TEST(TraceJoinsHostile, LongWaitChainIsFollowedWithoutRecursion) {
  constexpr size_t kHops = 65000;  // 130,002 records: under the 2^17 a window may hold
  TraceWindow joined = Chain(kHops, true);
  size_t marker = joined.records.size() - 1;
  EXPECT_EQ(UnjoinedStreams(joined, kCaller, marker, std::nullopt), json::array());
  TraceWindow open = Chain(kHops, false);
  json unjoined = UnjoinedStreams(open, kCaller, marker, std::nullopt);
  ASSERT_EQ(unjoined.size(), 1u);
  EXPECT_EQ(unjoined[0]["stream"], 100);
}

// Waits matched by forged sync ids that form a cycle join nothing (and terminate).
TEST(TraceJoinsHostile, WaitCycleJoinsNothing) {
  TraceWindow w;
  w.caller_stream = kCaller;
  w.dependencies = "";
  w.names = {"side_kernel", "kz marker", "sync"};
  w.records = {
      {TraceKind::kKernel, 0, 21, 10, 500, 0, 0, 1},          {TraceKind::kEventRecord, 2, 21, 0, 0, 0, 0, 2, 1, 11},
      {TraceKind::kEventRecord, 2, 22, 0, 0, 0, 0, 3, 2, 12}, {TraceKind::kStreamWait, 2, 22, 0, 0, 0, 0, 4, 1, 11},
      {TraceKind::kStreamWait, 2, 21, 0, 0, 0, 0, 5, 2, 12},  {TraceKind::kMarker, 1, kCaller, 600, 601, 0, 0, 6}};
  json unjoined = UnjoinedStreams(w, kCaller, 5, std::nullopt);
  ASSERT_EQ(unjoined.size(), 1u);
  EXPECT_EQ(unjoined[0]["stream"], 21);
}

// Finding 4: durations up to 2^62 ns summed in int64 wrapped; a negative foreign time then
// skipped trace.foreign_compute.
TEST(TraceJudgeHostile, HugeDurationsDoNotWrapTheSums) {
  const uint64_t huge = uint64_t(1) << 62;
  TraceWindow w;
  w.label = "trial 0";
  w.caller_stream = kCaller;
  w.dependencies = "";
  w.names = {"relu_kernel", "at::native::vectorized_elementwise_kernel", "kz marker"};
  w.records.push_back({TraceKind::kKernel, 0, kCaller, 1, 1001, 0, 0, 1});
  for (uint64_t i = 0; i < 4; ++i) w.records.push_back({TraceKind::kKernel, 1, kCaller, 1, huge, 0, 0, 2 + i});
  w.records.push_back({TraceKind::kMarker, 2, kCaller, huge, huge + 1, 0, 0, 9});
  TraceFacts facts{"/lib/libcupti.so.13", {"relu_kernel"}, {w}};
  json stage = AnalyzeTrace(facts, {});
  EXPECT_GT(stage["calls"][0]["foreign_us"].get<double>(), 0);
  EXPECT_EQ(stage["rule"], "trace.foreign_compute") << stage.dump();
}

// Finding 5: a frame nested ~8M deep fits in 16 MiB; dump() and copies recurse.
TEST(RunJudgesHostile, DeeplyNestedFramesAreNotParsed) {
  std::string deep =
      "{\"type\": \"judge\", \"token\": \"t\", \"facts\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_TRUE(worker::ParseFrameJson(deep).is_discarded());
  std::string ok = "{\"a\": " + std::string(worker::kMaxFrameDepth - 1, '[') +
                   std::string(worker::kMaxFrameDepth - 1, ']') + ", \"s\": \"[[[[\\\"[[\"}";
  EXPECT_FALSE(worker::ParseFrameJson(ok).is_discarded());
  std::string over =
      "{\"a\": " + std::string(worker::kMaxFrameDepth, '[') + std::string(worker::kMaxFrameDepth, ']') + "}";
  EXPECT_TRUE(worker::ParseFrameJson(over).is_discarded());
  // The final reply: a deep event is dropped as a protocol error, never copied into a verdict.
  util::ProcessResult p;
  p.end = util::ProcessEnd::kExited;
  p.exit_code = 0;
  p.channel_data = util::EncodeFrame("{\"type\": \"event\", \"token\": \"t\", \"stage\": \"timing\", \"data\": " +
                                     std::string(100000, '[') + std::string(100000, ']') + "}");
  worker::WorkerReply reply = worker::ParseWorkerReply(p, "t");
  EXPECT_TRUE(reply.events.empty());
  EXPECT_FALSE(reply.protocol_error.empty());
}

// Finding 6: times near 1e305 ms made the mean and speedup infinite ("speedup infx"); the
// child's method text was copied unbounded.
TEST(TimingStatsHostile, TimesAreBoundedAndTheMethodIsOurs) {
  json f = Measured(0.5, 0.25);
  f["reference_ms"] = std::vector<double>(30, 1e305);
  std::string error;
  EXPECT_FALSE(BuildTimingStage(f, 2000, &error));
  EXPECT_NE(error.find("reference_ms"), std::string::npos) << error;
  f = Measured(0.5, 0.25);
  f["candidate_ms"][0] = kMaxCallMs * 2;
  EXPECT_FALSE(BuildTimingStage(f, 2000, &error));
  f = Measured(0.5, 0.25);
  f["method"] = std::string(1 << 20, 'x');
  auto stage = BuildTimingStage(f, 2000, &error);
  ASSERT_TRUE(stage) << error;
  EXPECT_EQ((*stage)["method"], kTimingMethod);
}

// Finding 7: a child that never asks for the trace judgement and reports the trace skipped
// passes only when the trace was not required.
TEST(RunJudgesHostile, RequiredTraceNeverJudgedIsNotCorrect) {
  json skipped = {{"status", "skipped"}, {"reason", "tracer unavailable"}};
  JudgeOptions required;
  required.trace_required = true;
  json v = Verdict("correct", {{"trace", skipped}, {"timing", Measured(0.5, 0.25)}});
  RunJudges(required).Apply(v);
  EXPECT_EQ(v["status"], "runtime_error");
  EXPECT_EQ(v["error"]["kind"], "worker_internal");
  EXPECT_NE(v["reason"].get<std::string>().find("required but never judged (tracer unavailable)"), std::string::npos);
  EXPECT_EQ(v["stages"]["trace"]["status"], "error");
  json none = Verdict("correct", {});
  RunJudges(required).Apply(none);
  EXPECT_EQ(none["status"], "runtime_error");
  // A sample that failed on its own keeps its failure, and its stages as they were.
  json incorrect = Verdict("incorrect", {{"trace", skipped}});
  RunJudges(required).Apply(incorrect);
  EXPECT_EQ(incorrect["status"], "incorrect");
  EXPECT_EQ(incorrect["stages"]["trace"], skipped);
  json compile_error = Verdict("compile_error", {});
  RunJudges(required).Apply(compile_error);
  EXPECT_FALSE(compile_error["stages"].contains("trace"));
  // Not required (no GPU, integrity off, a self-check, no runtime, KZ_TRACE=0): skipped stays correct.
  json cpu = Verdict("correct", {{"trace", skipped}});
  RunJudges({}).Apply(cpu);
  EXPECT_EQ(cpu["status"], "correct");
  ::unsetenv("KZ_TRACE");
  EXPECT_TRUE(TraceRequired(true, true, false, "/lib/libkz_runtime.so"));
  EXPECT_FALSE(TraceRequired(false, true, false, "/lib/libkz_runtime.so"));
  EXPECT_FALSE(TraceRequired(true, false, false, "/lib/libkz_runtime.so"));
  EXPECT_FALSE(TraceRequired(true, true, false, ""));
  // A self-check traces nothing (the H100 run of session 17 found every kz optimize task check
  // refused as runtime_error before this argument existed).
  EXPECT_FALSE(TraceRequired(true, true, true, "/lib/libkz_runtime.so"));
  ::setenv("KZ_TRACE", "0", 1);
  EXPECT_FALSE(TraceRequired(true, true, false, "/lib/libkz_runtime.so"));
  ::unsetenv("KZ_TRACE");
}

}  // namespace
}  // namespace kz::verify
