#include "verify/verdict.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace kz::verify {
using nlohmann::json;
namespace {
json Fresh(const std::string& backend = "cuda") {
  Sample s{"/t.py", "/c.py", backend, std::nullopt, "c"};
  return NewVerdict(s, backend, "task", "cand");
}
worker::WorkerReply Died(util::ProcessEnd end, int sig = 0) {
  worker::WorkerReply r;
  r.process.end = end;
  r.process.signal = sig;
  r.process.stderr_tail = "CUDA error: an illegal memory access was encountered";
  r.events.push_back({{"type", "event"}, {"stage", "load"}, {"data", {{"status", "ok"}}}});
  return r;
}
}  // namespace

TEST(Verdict, NewVerdictHasSchemaAndHashes) {
  json v = Fresh();
  EXPECT_EQ(v["schema"], kVerdictSchema);
  EXPECT_EQ(v["task"]["xxh128"].get<std::string>().size(), 32u);
  EXPECT_FALSE(v["checked"]["ran"].get<bool>());
}

TEST(Verdict, SegfaultWithoutResultIsRuntimeErrorNamingTheSignal) {
  json v = Fresh();
  ApplyRunReply(v, Died(util::ProcessEnd::kSignaled, SIGSEGV));
  EXPECT_EQ(v["status"], "runtime_error");
  EXPECT_NE(v["reason"].get<std::string>().find("SIGSEGV"), std::string::npos);
  EXPECT_NE(v["reason"].get<std::string>().find("last completed stage: load"), std::string::npos);
  EXPECT_EQ(v["stages"]["load"]["status"], "ok");
  EXPECT_EQ(v["child"]["signal"], "SIGSEGV");
}

TEST(Verdict, DeadlineIsTimeoutEvenIfAResultArrived) {
  json v = Fresh();
  auto r = Died(util::ProcessEnd::kTimedOut, SIGKILL);
  r.result = json{{"type", "result"}, {"status", "correct"}};
  ApplyRunReply(v, r);
  EXPECT_EQ(v["status"], "timeout");
}

TEST(Verdict, ChildMayRejectOnDataflow) {
  json v = Fresh();
  worker::WorkerReply r;
  r.process.end = util::ProcessEnd::kExited;
  r.result = json{{"type", "result"}, {"status", "rejected"},
                  {"reason", "dataflow.aliasing: trial 0: output 0 shares memory with input 0"}};
  ApplyRunReply(v, r);
  EXPECT_EQ(v["status"], "rejected");
}

TEST(Verdict, ChildResultIsTakenButMayNotClaimSupervisorStatuses) {
  json v = Fresh();
  worker::WorkerReply r;
  r.process.end = util::ProcessEnd::kExited;
  r.result = json{{"type", "result"}, {"status", "incorrect"}, {"reason", "trial 0 differs"},
                  {"stages", {{"correctness", {{"status", "fail"}}}}}};
  ApplyRunReply(v, r);
  EXPECT_EQ(v["status"], "incorrect");
  EXPECT_EQ(v["stages"]["correctness"]["status"], "fail");
  (*r.result)["status"] = "timeout";
  json v2 = Fresh();
  ApplyRunReply(v2, r);
  EXPECT_EQ(v2["status"], "runtime_error");
}

TEST(Verdict, WeakTaskBecomesAFlag) {
  json v = Fresh("triton");
  v["stages"]["extra_checks"] = {{"status", "pass"}, {"weak_task", "reference output 0 is near zero"}};
  FinishChecks(v, true);
  ASSERT_EQ(v["flags"].size(), 1u);
  EXPECT_EQ(v["flags"][0], "weak_task: reference output 0 is near zero");
}

TEST(Verdict, FinishChecksSaysWhatWasNotChecked) {
  json v = Fresh("cuda");
  v["stages"]["compile"] = {{"status", "ok"}};
  v["status"] = "not_run";
  FinishChecks(v, /*on_gpu=*/false);
  EXPECT_TRUE(v["checked"]["compiled"].get<bool>());
  EXPECT_FALSE(v["checked"]["correctness"].get<bool>());
  auto nc = v["not_checked"].dump();
  EXPECT_NE(nc.find("CUDA candidates need a GPU"), std::string::npos);
  EXPECT_NE(nc.find("timing: no GPU"), std::string::npos);
}

TEST(Verdict, TraceIsCheckedWhenItsRulesRan) {
  json v = Fresh("cuda");
  v["stages"]["correctness"] = {{"status", "pass"}};
  v["stages"]["trace"] = {{"status", "reject"}, {"rule", "trace.side_stream"}};
  FinishChecks(v, /*on_gpu=*/true);
  EXPECT_TRUE(v["checked"]["trace"].get<bool>());
  EXPECT_EQ(v["not_checked"].dump().find("trace:"), std::string::npos);
}

TEST(Verdict, TraceNotCheckedSaysWhy) {
  json v = Fresh("cuda");
  v["stages"]["correctness"] = {{"status", "pass"}};
  v["stages"]["trace"] = {{"status", "skipped"}, {"reason", "no CUPTI: libcupti.so.13: not found"}};
  v["stages"]["timing"] = {{"status", "ok"}};
  v["stages"]["extra_checks"] = {{"status", "pass"},
                                 {"checks", {{{"check", "signed_inputs"}, {"ran", true}, {"pass", true}},
                                             {{"check", "perturbed_sizes"}, {"ran", true}, {"pass", true}}}}};
  FinishChecks(v, /*on_gpu=*/true);
  EXPECT_FALSE(v["checked"]["trace"].get<bool>());
  EXPECT_TRUE(v["checked"]["timing"].get<bool>());
  ASSERT_EQ(v["not_checked"].size(), 1u);
  EXPECT_EQ(v["not_checked"][0], "trace: no CUPTI: libcupti.so.13: not found");

  json cpu = Fresh("triton");
  cpu["stages"]["correctness"] = {{"status", "pass"}};
  FinishChecks(cpu, /*on_gpu=*/false);
  EXPECT_NE(cpu["not_checked"].dump().find("trace: no GPU"), std::string::npos);

  json failed = Fresh("cuda");
  failed["stages"]["correctness"] = {{"status", "fail"}};
  FinishChecks(failed, /*on_gpu=*/true);
  EXPECT_NE(failed["not_checked"].dump().find("trace: correctness did not pass"), std::string::npos);
}

TEST(Verdict, EveryExtraCheckThatDidNotRunIsNotChecked) {
  json v = Fresh("triton");
  v["policy"] = "strict";
  v["stages"]["correctness"] = {{"status", "pass"}};
  v["stages"]["extra_checks"] = {
      {"status", "pass"},
      {"checks",
       {{{"check", "signed_inputs"}, {"ran", false}, {"reason", "get_inputs already draws negative values"}},
        {{"check", "perturbed_sizes"},
         {"ran", false},
         {"reason", "no module-level size constant read by get_inputs/get_init_inputs"}}}}};
  FinishChecks(v, /*on_gpu=*/true);
  auto nc = v["not_checked"].dump();
  EXPECT_NE(nc.find("signed_inputs: get_inputs already draws negative values"), std::string::npos);
  EXPECT_NE(nc.find("perturbed_sizes: no module-level size constant read by get_inputs/get_init_inputs"),
            std::string::npos);

  json partial = Fresh("triton");
  partial["stages"]["correctness"] = {{"status", "pass"}};
  partial["stages"]["extra_checks"] = {
      {"status", "pass"},
      {"checks",
       {{{"check", "signed_inputs"}, {"ran", true}, {"pass", true}},
        {{"check", "perturbed_sizes"}, {"ran", true}, {"pass", true}, {"partial", "not moved: {groups: 8 -> 5}"}}}}};
  FinishChecks(partial, /*on_gpu=*/true);
  auto pnc = partial["not_checked"].dump();
  EXPECT_NE(pnc.find("perturbed_sizes: not moved: {groups: 8 -> 5}"), std::string::npos);
  EXPECT_EQ(pnc.find("signed_inputs"), std::string::npos);
}

TEST(Verdict, AbsentExtraChecksSayWhyUnlessIntegrityIsOff) {
  json rejected = Fresh("cuda");
  rejected["policy"] = "strict";
  rejected["status"] = "rejected";
  rejected["stages"]["correctness"] = {{"status", "pass"}};
  FinishChecks(rejected, /*on_gpu=*/true);
  EXPECT_NE(rejected["not_checked"].dump().find("extra_checks: did not complete (rejected)"),
            std::string::npos);

  json failed = Fresh("cuda");
  failed["stages"]["correctness"] = {{"status", "fail"}};
  FinishChecks(failed, /*on_gpu=*/true);
  EXPECT_NE(failed["not_checked"].dump().find("extra_checks: correctness did not pass"), std::string::npos);

  json off = Fresh("cuda");
  off["policy"] = "none";
  off["stages"]["correctness"] = {{"status", "pass"}};
  FinishChecks(off, /*on_gpu=*/true);
  EXPECT_EQ(off["not_checked"].dump().find("extra_checks:"), std::string::npos);
}

}  // namespace kz::verify
