// The supervisor's judges over a run child's facts (verify/run_judges.h, run_channel.h): the
// trace judgement answered while the child waits, the timing statistics applied after it
// ended, and what a child that forges its own judgements gets.
#include "verify/run_judges.h"

#include <gtest/gtest.h>

#include "scripted_worker.h"
#include "trace_records.h"
#include "verify/cpu_sample.h"
#include "verify/timing_stats.h"
#include "verify/verdict.h"
#include "verify/verifier.h"

namespace kz::verify {
namespace {
using nlohmann::json;
using namespace trace_test;  // NOLINT(google-build-using-namespace): the record builders

json Verdict(const std::string& status, const json& stages) {
  Sample s{"/t.py", "/c.py", "triton", std::nullopt, "c"};
  json v = NewVerdict(s, "triton", "task", "cand");
  v["policy"] = "strict";
  v["status"] = status;
  v["reason"] = "matched the reference on 5 trials";
  v["stages"] = stages;
  return v;
}

json Measured(double ref_ms, double cand_ms, double cand_gap_ms = 0.09, size_t n = 30) {
  return {{"status", "measured"},
          {"method", kTimingMethod},
          {"stop_rule", "stable"},
          {"stable", true},
          {"flush_bytes", 268435456},
          {"reference_ms", std::vector<double>(n, ref_ms)},
          {"candidate_ms", std::vector<double>(n, cand_ms)},
          {"reference_host_ms", std::vector<double>(n, ref_ms + 0.09)},
          {"candidate_host_ms", std::vector<double>(n, cand_ms + cand_gap_ms)}};
}

json TraceFrame(const std::vector<json>& windows) {
  json wire = json::array();
  for (const auto& w : windows) wire.push_back(Wire(w));
  return {{"type", "judge"},
          {"stage", "trace"},
          {"facts", {{"library", "/lib/libcupti.so.13"}, {"candidate_kernel_names", {"relu_kernel"}}, {"windows", wire}}}};
}

TEST(RunJudges, TimingStatisticsAndSpeedupInTheReason) {
  RunJudges judges({});
  json v = Verdict("correct", {{"timing", Measured(0.5, 0.25)}});
  judges.Apply(v);
  EXPECT_EQ(v["status"], "correct");
  EXPECT_EQ(v["reason"], "matched the reference on 5 trials; speedup 2.00x");
  EXPECT_EQ(v["stages"]["timing"]["status"], "ok");
  EXPECT_EQ(v["stages"]["timing"]["speedup"], 2.0);
  EXPECT_TRUE(v["stages"]["timing"]["host_check"]["pass"].get<bool>());
}

TEST(RunJudges, HostMismatchRejectsUnlessIntegrityIsOff) {
  json v = Verdict("correct", {{"timing", Measured(1.0, 0.005, 1.09)}});
  RunJudges({}).Apply(v);
  EXPECT_EQ(v["status"], "rejected");
  EXPECT_EQ(v["error"]["kind"], "timing");
  EXPECT_EQ(v["reason"].get<std::string>().rfind("timing.host_mismatch: ", 0), 0u);
  json off = Verdict("correct", {{"timing", Measured(1.0, 0.005, 1.09)}});
  JudgeOptions no_integrity;
  no_integrity.integrity = false;
  RunJudges(no_integrity).Apply(off);
  EXPECT_EQ(off["status"], "correct");
}

TEST(RunJudges, SkippedTimingIsLeftAlone) {
  json v = Verdict("correct", {{"timing", {{"status", "skipped"}, {"reason", "no GPU"}}}});
  RunJudges({}).Apply(v);
  EXPECT_EQ(v["stages"]["timing"]["reason"], "no GPU");
  EXPECT_EQ(v["reason"], "matched the reference on 5 trials");
}

TEST(RunJudges, ChildMadeStatisticsAreAWorkerError) {
  // A child claiming a speedup instead of reporting times (a forged judgement).
  json v = Verdict("correct", {{"timing", {{"status", "ok"}, {"speedup", 1000.0}}}});
  RunJudges({}).Apply(v);
  EXPECT_EQ(v["status"], "runtime_error");
  EXPECT_EQ(v["error"]["kind"], "worker_internal");
  EXPECT_EQ(v["stages"]["timing"]["status"], "error");
  json bad = Verdict("correct", {{"timing", Measured(0.5, 0.25)}});
  bad["stages"]["timing"]["candidate_ms"][2] = -1.0;
  RunJudges({}).Apply(bad);
  EXPECT_EQ(bad["status"], "runtime_error");
  EXPECT_NE(bad["reason"].get<std::string>().find("malformed timing facts: candidate_ms"), std::string::npos);
}

TEST(RunJudges, TraceAnswerAndOverride) {
  RunJudges judges({});
  json reply = judges.Answer(TraceFrame({Window({Marker(5)}, "same inputs again (1)")}));
  EXPECT_EQ(reply["verdict"], "reject");
  EXPECT_EQ(reply["reason"].get<std::string>().rfind("trace.no_candidate_kernel: same inputs again (1)", 0), 0u);
  // A second request (forged, with other facts) gets the first answer.
  json again = judges.Answer(TraceFrame({Window({Rec("kernel", "relu_kernel", 1, 2), Marker(5)})}));
  EXPECT_EQ(again["verdict"], "reject");
  // The child ignored the rejection and claimed correct: the judgement stands.
  json v = Verdict("correct", {{"trace", {{"status", "judged"}}}, {"timing", Measured(0.5, 0.25)}});
  judges.Apply(v);
  EXPECT_EQ(v["status"], "rejected");
  EXPECT_EQ(v["error"]["kind"], "trace");
  EXPECT_EQ(v["stages"]["trace"]["status"], "reject");
  EXPECT_EQ(v["stages"]["trace"]["library"], "/lib/libcupti.so.13");
}

TEST(RunJudges, PassingTraceIsKeptAndChecked) {
  RunJudges judges({});
  EXPECT_EQ(judges.Answer(TraceFrame({Window({Rec("kernel", "relu_kernel", 1, 2), Marker(5)})}))["verdict"], "pass");
  json v = Verdict("correct", {{"trace", {{"status", "judged"}}}});
  judges.Apply(v);
  EXPECT_EQ(v["status"], "correct");
  EXPECT_EQ(v["stages"]["trace"]["status"], "pass");
  FinishChecks(v, true);
  EXPECT_TRUE(v["checked"]["trace"].get<bool>());
}

TEST(RunJudges, MalformedTraceFactsAreRefused) {
  auto refused = [](json frame, const std::string& expect, bool judged = true) {
    RunJudges judges({});
    json reply = judges.Answer(frame);
    EXPECT_EQ(reply["verdict"], "invalid") << frame.dump().substr(0, 200);
    EXPECT_NE(reply["reason"].get<std::string>().find(expect), std::string::npos) << reply.dump();
    EXPECT_EQ(judges.trace_judged(), judged);
    if (!judged) return;  // a request for another stage judges nothing (the child stops itself)
    json v = Verdict("correct", {});
    judges.Apply(v);
    EXPECT_EQ(v["status"], "runtime_error");
    EXPECT_EQ(v["stages"]["trace"]["status"], "error");
  };
  json ok = TraceFrame({Window({Rec("kernel", "relu_kernel", 1, 2), Marker(5)})});
  json f = ok;
  f["facts"]["windows"][0]["records"][0].erase(3);  // a record missing a field
  refused(f, "not a list of 11 fields");
  f = ok;
  f["facts"]["windows"][0]["records"][0][3] = -5;  // a negative time
  refused(f, "not an unsigned integer");
  f = ok;
  f["facts"]["windows"][0]["records"][0][3] = 1.5;
  refused(f, "not an unsigned integer");
  f = ok;
  f["facts"]["windows"][0]["records"][0][1] = 9;  // a name that is not there
  refused(f, "out of range");
  f = ok;
  f["facts"]["windows"][0]["records"][0][0] = "launch";
  refused(f, "unknown record kind");
  f = ok;
  f["facts"]["windows"][0].erase("dropped");
  refused(f, "dropped");
  f = ok;
  f["facts"]["windows"][0]["caller_stream"] = "7";
  refused(f, "caller_stream");
  f = ok;
  f["facts"]["candidate_kernel_names"] = "relu_kernel";
  refused(f, "candidate_kernel_names");
  f = ok;
  f["facts"].erase("windows");
  refused(f, "windows");
  f = ok;
  f.erase("facts");
  refused(f, "no facts");
  refused(json{{"type", "judge"}, {"stage", "timing"}}, "only stage trace", false);
}

TEST(RunJudges, EmptyAndDroppedWindows) {
  RunJudges none({});
  EXPECT_EQ(none.Answer(TraceFrame({}))["verdict"], "pass");  // no window: nothing to reject
  RunJudges dropped({});
  json w = Window({Marker(5)}, "trial 0", kCaller, 70000);
  EXPECT_EQ(dropped.Answer(TraceFrame({w}))["verdict"], "pass");  // not judged for missing kernels
}

TEST(RunJudges, UnaskedTraceJudgementIsAWorkerError) {
  json v = Verdict("correct", {{"trace", {{"status", "pass"}, {"findings", json::array()}}}});
  RunJudges({}).Apply(v);
  EXPECT_EQ(v["status"], "runtime_error");
  EXPECT_EQ(v["stages"]["trace"]["status"], "error");
  json skipped = Verdict("correct", {{"trace", {{"status", "skipped"}, {"reason", "no GPU"}}}});
  RunJudges({}).Apply(skipped);
  EXPECT_EQ(skipped["status"], "correct");
}

// The whole path: a run child asks for the trace judgement on its channel, waits for the
// answer, then (a cheat) ignores the rejection and claims `correct`.
TEST(RunJudges, RunChildIsAnsweredAndOverruled) {
  CpuSample s("judge-");
  json frame = TraceFrame({Window({Marker(5)}, "fresh inputs")});
  auto launcher = std::make_shared<testing_support::ScriptedLauncher>([&](const worker::WorkerCall&) {
    return testing_support::Script()
        .Frame(frame)
        .AwaitInput()
        .Frame({{"type", "event"}, {"stage", "trace"}, {"data", {{"status", "judged"}}}})
        .Result({{"status", "correct"}, {"reason", "matched"}, {"stages", json::object()}, {"error", nullptr}});
  });
  Verifier v(testing_support::ScriptedWorkerConfig(), s.options, {}, launcher);
  auto verdicts = v.VerifyAll({s.Named("x")});
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0]["status"], "rejected") << verdicts[0].dump();
  EXPECT_EQ(verdicts[0]["reason"].get<std::string>().rfind("trace.no_candidate_kernel: fresh inputs", 0), 0u);
  EXPECT_EQ(verdicts[0]["stages"]["trace"]["status"], "reject");
  auto calls = launcher->Calls();
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(calls[0].received.size(), 1u) << "the child was answered while it waited";
  EXPECT_EQ(calls[0].received[0]["verdict"], "reject");
}

}  // namespace
}  // namespace kz::verify
